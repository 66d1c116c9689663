import CSQLite
import Foundation
import XCTest

/// Another process holding the write lock of an SQLite file: the sqlite3
/// tool runs `BEGIN IMMEDIATE` and one insert into the settings table and
/// keeps the transaction open until `release()` commits it. What a second
/// `pincer` shell in the middle of a write looks like to the store.
final class SQLiteWriteLock {
    let path: String
    private let process = Process()
    private let input = Pipe()
    private let errors = Pipe()
    private var released = false

    /// Returns once the lock is held (checked from this process, not assumed).
    init(path: String, namespace: String = "lock-holder") throws {
        self.path = path
        process.executableURL = URL(fileURLWithPath: try Consumer.require(Consumer.sqlite3))
        process.arguments = ["-bail", path]
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data("""
            BEGIN IMMEDIATE;
            INSERT OR REPLACE INTO settings(namespace, key, value) VALUES ('\(namespace)', 'held', 'yes');

            """.utf8))
        let deadline = Date().addingTimeInterval(20)
        while !SQLiteWriteLock.isWriteLocked(path) {
            guard process.isRunning, Date() < deadline else {
                process.terminate()
                throw LockError("sqlite3 did not take the write lock of \(path) within 20 s: \(errorText())")
            }
            usleep(5_000)
        }
    }

    /// Commits the transaction and waits for sqlite3 to exit cleanly.
    func release(file: StaticString = #filePath, line: UInt = #line) {
        guard !released else { return }
        released = true
        input.fileHandleForWriting.write(Data("COMMIT;\n".utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "sqlite3 holding \(path): \(errorText())", file: file, line: line)
    }

    private func errorText() -> String {
        String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
    }

    deinit {
        if !released {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    /// Whether another connection holds the write lock: a write transaction
    /// of our own with no busy timeout is refused with SQLITE_BUSY.
    static func isWriteLocked(_ path: String) -> Bool {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { return false }
        sqlite3_busy_timeout(db, 0)
        let rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil)
        if rc == SQLITE_OK { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
        return rc == SQLITE_BUSY
    }

    struct LockError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// Nanoseconds of CLOCK_MONOTONIC, for the timing bounds of the tests.
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
