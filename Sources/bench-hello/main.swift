// Baseline for the cold-start benchmark: a Swift program that imports
// Foundation and prints one JSON object, as `pincer commands --json` does.
import Foundation

let object: [String: Any] = ["hello": "world", "ok": true]
let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
FileHandle.standardOutput.write(data)
FileHandle.standardOutput.write("\n".data(using: .utf8)!)
