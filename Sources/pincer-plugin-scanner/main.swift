// The plugin scanner: run by `pincer` in a child process to learn what
// plugin files register (PincerHost/PluginScanner.swift), so a plugin that
// crashes or hangs in init never takes the shell down with it.
import PincerHost
#if canImport(Glibc)
import Glibc
#endif

exit(PluginScanner.main(arguments: Array(CommandLine.arguments.dropFirst())))
