// The `pincer` executable: everything lives in PincerShell so tests can
// drive the same code in-process.
import PincerShell
#if canImport(Glibc)
import Glibc
#endif

let shell = Shell()
let code = shell.run(Array(CommandLine.arguments.dropFirst()))
shell.close() // exit() skips deinit, and plugins are owed their shutdown call
// A plugin call that did not stop is still running in its library: exit()
// would run atexit handlers and destructors under it, so leave at once.
if shell.abandonedCall { _exit(code) }
exit(code)
