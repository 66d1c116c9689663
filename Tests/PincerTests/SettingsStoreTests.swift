import CSQLite
import Foundation
import Synchronization
import XCTest

import PincerHost

final class SettingsStoreTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        var template = Array((NSTemporaryDirectory() + "/pincer-settings-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        XCTAssertTrue(made, "mkdtemp failed: \(String(cString: strerror(errno)))")
        directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    override func tearDownWithError() throws {
        if !directory.isEmpty {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    private var storePath: String { directory + "/settings.sqlite3" }

    private func contents(of directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    /// Runs SQL on the store file through a separate raw connection.
    private func rawSQL(_ path: String, _ sql: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            defer { sqlite3_close(db) }
            throw StoreTestError(String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_close(db) }
        sqlite3_busy_timeout(db, 10_000)
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "?"
            sqlite3_free(message)
            throw StoreTestError(text)
        }
    }

    // MARK: Basics

    func testRoundTrip() throws {
        let store = try SettingsStore(directory: directory)
        XCTAssertEqual(store.path, storePath)
        XCTAssertNil(store.setAsideWarning)
        XCTAssertNil(try store.get(namespace: "ui", key: "theme"))

        try store.set(namespace: "ui", key: "theme", value: "dark")
        XCTAssertEqual(try store.get(namespace: "ui", key: "theme"), "dark")

        try store.set(namespace: "ui", key: "theme", value: "light")
        XCTAssertEqual(try store.get(namespace: "ui", key: "theme"), "light")

        // Text that would break spliced SQL, non-ASCII, embedded NUL, empty string.
        let awkward = "it's \"quoted\"; DROP TABLE settings; -- ünïcødé 🦀 \u{0} after NUL"
        try store.set(namespace: "ui", key: "awkward'key", value: awkward)
        XCTAssertEqual(try store.get(namespace: "ui", key: "awkward'key"), awkward)
        try store.set(namespace: "ui", key: "empty", value: "")
        XCTAssertEqual(try store.get(namespace: "ui", key: "empty"), "")

        let all = try store.all(namespace: "ui")
        XCTAssertEqual(all.map(\.key), ["awkward'key", "empty", "theme"])
        XCTAssertEqual(all.map(\.value), [awkward, "", "light"])
    }

    func testRemove() throws {
        let store = try SettingsStore(directory: directory)
        try store.set(namespace: "ns", key: "a", value: "1")
        try store.set(namespace: "ns", key: "b", value: "2")
        try store.set(namespace: "ns", key: "a", value: nil)
        XCTAssertNil(try store.get(namespace: "ns", key: "a"))
        XCTAssertEqual(try store.get(namespace: "ns", key: "b"), "2")
        XCTAssertEqual(try store.all(namespace: "ns").map(\.key), ["b"])
        // Removing a key that does not exist is fine.
        try store.set(namespace: "ns", key: "never-set", value: nil)
    }

    func testNamespacesAreSeparate() throws {
        let store = try SettingsStore(directory: directory)
        try store.set(namespace: "one", key: "k", value: "from one")
        try store.set(namespace: "two", key: "k", value: "from two")
        XCTAssertEqual(try store.get(namespace: "one", key: "k"), "from one")
        XCTAssertEqual(try store.get(namespace: "two", key: "k"), "from two")
        XCTAssertNil(try store.get(namespace: "three", key: "k"))

        try store.set(namespace: "one", key: "k", value: nil)
        XCTAssertNil(try store.get(namespace: "one", key: "k"))
        XCTAssertEqual(try store.get(namespace: "two", key: "k"), "from two")
        XCTAssertEqual(try store.all(namespace: "one").count, 0)
        XCTAssertEqual(try store.all(namespace: "two").map(\.value), ["from two"])
    }

    func testPersistsAfterReopening() throws {
        do {
            let store = try SettingsStore(directory: directory)
            try store.set(namespace: "ns", key: "kept", value: "yes")
            try store.set(namespace: "ns", values: [(key: "b1", value: "x"), (key: "b2", value: "y")])
        }
        let reopened = try SettingsStore(directory: directory)
        XCTAssertNil(reopened.setAsideWarning)
        XCTAssertEqual(try reopened.get(namespace: "ns", key: "kept"), "yes")
        XCTAssertEqual(try reopened.all(namespace: "ns").map(\.key), ["b1", "b2", "kept"])
    }

    func testCreatesMissingParentDirectories() throws {
        let nested = directory + "/a/b/c"
        let store = try SettingsStore(directory: nested)
        try store.set(namespace: "ns", key: "k", value: "v")
        XCTAssertEqual(store.path, nested + "/settings.sqlite3")
        var info = stat()
        XCTAssertEqual(stat(directory + "/a/b", &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
    }

    func testDirectoryThatIsAFileIsAClearError() throws {
        let blocker = directory + "/not-a-directory"
        XCTAssertTrue(FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8)))
        XCTAssertThrowsError(try SettingsStore(directory: blocker + "/state")) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains(blocker), message)
        }
    }

    // MARK: Transactions

    func testBatchSetIsAtomic() throws {
        let store = try SettingsStore(directory: directory)
        try store.set(namespace: "ns", values: [(key: "x", value: "old"), (key: "y", value: "keep me")])
        XCTAssertEqual(try store.all(namespace: "ns").map(\.value), ["old", "keep me"])

        // Make inserting one particular key fail, in the middle of the batch.
        try rawSQL(storePath, """
            CREATE TRIGGER reject_poison BEFORE INSERT ON settings WHEN NEW.key = 'poison'
            BEGIN SELECT RAISE(ABORT, 'poisoned key rejected'); END;
            """)

        XCTAssertThrowsError(try store.set(namespace: "ns", values: [
            (key: "x", value: "new"),
            (key: "y", value: nil),
            (key: "a", value: "added"),
            (key: "poison", value: "boom"),
            (key: "z", value: "after"),
        ])) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains(self.storePath), message)
            XCTAssertTrue(message.contains("poisoned key rejected"), message)
        }
        // Nothing of the failed batch is visible.
        let after = try store.all(namespace: "ns")
        XCTAssertEqual(after.map(\.key), ["x", "y"])
        XCTAssertEqual(after.map(\.value), ["old", "keep me"])

        // The store is still usable (no transaction left open).
        try store.set(namespace: "ns", values: [(key: "x", value: "new"), (key: "y", value: nil)])
        XCTAssertEqual(try store.all(namespace: "ns").map(\.value), ["new"])
        try store.set(namespace: "ns", key: "single", value: "ok")
        XCTAssertEqual(try store.get(namespace: "ns", key: "single"), "ok")
    }

    // MARK: Damaged and foreign files

    func testUnreadableFileIsSetAside() throws {
        let line = "this is definitely not an SQLite database, just some text.\n"
        let garbage = Data(String(repeating: line, count: 4096 / line.utf8.count + 1).utf8.prefix(4096))
        XCTAssertEqual(garbage.count, 4096)
        try garbage.write(to: URL(fileURLWithPath: storePath))

        let store = try SettingsStore(directory: directory)
        let warning = try XCTUnwrap(store.setAsideWarning)

        let listing = try contents(of: directory)
        let asideNames = listing.filter { $0.hasPrefix("settings.sqlite3.unreadable-") }
        XCTAssertEqual(asideNames.count, 1, "\(listing)")
        let asideName = try XCTUnwrap(asideNames.first)
        let asidePath = directory + "/" + asideName
        XCTAssertNotNil(asideName.range(of: #"^settings\.sqlite3\.unreadable-\d{8}T\d{6}$"#,
                                        options: .regularExpression), asideName)
        XCTAssertTrue(warning.contains(store.path), warning)
        XCTAssertTrue(warning.contains(asidePath), warning)
        XCTAssertTrue(warning.contains("not a database"), warning)

        // The old file is kept byte for byte.
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: asidePath)), garbage)

        // The new store works, and persists.
        try store.set(namespace: "ns", key: "k", value: "v")
        XCTAssertEqual(try store.get(namespace: "ns", key: "k"), "v")
        let reopened = try SettingsStore(directory: directory)
        XCTAssertNil(reopened.setAsideWarning)
        XCTAssertEqual(try reopened.get(namespace: "ns", key: "k"), "v")
    }

    func testSetAsideNeverOverwritesAnEarlierOne() throws {
        let first = Data(repeating: UInt8(ascii: "A"), count: 4096)
        let second = Data(repeating: UInt8(ascii: "B"), count: 4096)
        try first.write(to: URL(fileURLWithPath: storePath))
        let warning1 = try XCTUnwrap(try SettingsStore(directory: directory).setAsideWarning)
        try FileManager.default.removeItem(atPath: storePath)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storePath + suffix) }
        try second.write(to: URL(fileURLWithPath: storePath))
        let warning2 = try XCTUnwrap(try SettingsStore(directory: directory).setAsideWarning)
        XCTAssertNotEqual(warning1, warning2)

        let aside = try contents(of: directory).filter { $0.hasPrefix("settings.sqlite3.unreadable-") }
        XCTAssertEqual(aside.count, 2, "\(aside)")
        let kept = try Set(aside.map { try Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0)) })
        XCTAssertEqual(kept, [first, second])
    }

    func testNewerSchemaVersionIsRefusedAndLeftUntouched() throws {
        try rawSQL(storePath, """
            CREATE TABLE settings(namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                                  extra BLOB, PRIMARY KEY(namespace, key)) WITHOUT ROWID;
            INSERT INTO settings VALUES ('ns', 'k', 'v', x'00');
            PRAGMA user_version = 99;
            """)
        let before = try Data(contentsOf: URL(fileURLWithPath: storePath))
        let listingBefore = try contents(of: directory)

        XCTAssertThrowsError(try SettingsStore(directory: directory)) { error in
            let message = "\(error)"
            XCTAssertTrue(error is StoreError)
            XCTAssertTrue(message.contains(self.storePath), message)
            XCTAssertTrue(message.contains("99"), message)
        }

        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: storePath)), before)
        XCTAssertEqual(try contents(of: directory), listingBefore)
    }

    // MARK: Concurrency

    func testTwoInstancesOnTwoThreadsWriteConcurrently() throws {
        let stores = [try SettingsStore(directory: directory), try SettingsStore(directory: directory)]
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        let perThread = 500
        for (index, store) in stores.enumerated() {
            group.enter()
            let thread = Thread {
                for n in 0..<perThread {
                    do {
                        try store.set(namespace: "race", key: "t\(index)-\(n)", value: "\(index):\(n)")
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                group.leave()
            }
            thread.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        XCTAssertEqual(failures.withLock { $0 }, [])

        let check = try SettingsStore(directory: directory)
        let all = try check.all(namespace: "race")
        XCTAssertEqual(all.count, 2 * perThread)
        for index in 0..<2 {
            for n in 0..<perThread {
                XCTAssertEqual(try check.get(namespace: "race", key: "t\(index)-\(n)"), "\(index):\(n)")
            }
        }
    }

    // MARK: WAL and the busy timeout (README "Settings store")

    /// The journal mode as the sqlite3 tool reads it from the file itself.
    private func journalMode(_ path: String) throws -> String {
        let result = try Fixture.run(try Consumer.require(Consumer.sqlite3), [path, "PRAGMA journal_mode;"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testTheStoreFileIsInWALMode() throws {
        let store = try SettingsStore(directory: directory)
        try store.set(namespace: "ns", key: "k", value: "v")
        XCTAssertEqual(try journalMode(store.path), "wal")
        // The file the shell itself makes, too.
        let shellState = directory + "/shell"
        let pin = try Fixture.pincer(["pin", "devopts.api-mode"], stateDir: shellState)
        XCTAssertEqual(pin.status, 0, pin.stderr)
        XCTAssertEqual(try journalMode(shellState + "/settings.sqlite3"), "wal")
    }

    /// A write while another process holds the write lock (for less than
    /// the 10 s timeout) waits for it and then succeeds; both writes land.
    func testAWriteWaitsForAnotherProcesssLockAndSucceeds() throws {
        let store = try SettingsStore(directory: directory)
        try store.set(namespace: "ns", key: "before", value: "1")
        let holder = try SQLiteWriteLock(path: store.path)
        let held: UInt64 = 1_500_000_000
        let writer = TimedCall { try store.set(namespace: "ns", key: "during", value: "2") }
        // Reading is not held up by the other process's open write transaction.
        let readStart = monotonicNanoseconds()
        XCTAssertEqual(try store.get(namespace: "ns", key: "before"), "1")
        XCTAssertLessThan(monotonicNanoseconds() - readStart, 500_000_000, "a read waited for the other process's write lock")
        usleep(UInt32(held / 1000))
        XCTAssertFalse(writer.isDone, "the write did not wait for the lock (\(writer.wait(seconds: 0) ?? "it succeeded"))")
        holder.release()
        XCTAssertNil(writer.wait(seconds: 15), "the write after the lock was released")
        XCTAssertGreaterThanOrEqual(writer.elapsed, held, "the write returned before the lock was released")
        XCTAssertLessThan(writer.elapsed, 10_000_000_000, "the write took the whole busy timeout")
        XCTAssertEqual(try store.get(namespace: "ns", key: "during"), "2")
        XCTAssertEqual(try store.get(namespace: "lock-holder", key: "held"), "yes", "the other process's write landed too")
    }

    /// Past the timeout the write fails (it does not hang or corrupt
    /// anything), naming the file; the store works again afterwards.
    func testAWriteGivesUpAfterTheTenSecondBusyTimeout() throws {
        let store = try SettingsStore(directory: directory)
        let holder = try SQLiteWriteLock(path: store.path)
        let writer = TimedCall { try store.set(namespace: "ns", key: "late", value: "x") }
        let failure = writer.wait(seconds: 20)
        holder.release()
        let message = try XCTUnwrap(failure, "the write succeeded while another process held the lock")
        XCTAssertTrue(message.contains(store.path), message)
        XCTAssertTrue(message.contains("locked"), message)
        XCTAssertGreaterThanOrEqual(writer.elapsed, 9_500_000_000, "gave up before the 10 s timeout")
        XCTAssertLessThan(writer.elapsed, 15_000_000_000, "waited far past the 10 s timeout")
        XCTAssertNil(try store.get(namespace: "ns", key: "late"))
        try store.set(namespace: "ns", key: "late", value: "y")
        XCTAssertEqual(try store.get(namespace: "ns", key: "late"), "y")
    }

    // MARK: Durability and privacy (README "Settings store")

    /// FULL, in WAL mode: a commit is fsynced before it is acknowledged, so
    /// it survives a power loss (NORMAL would only survive a crash).
    func testCommitsAreSynchronousFull() throws {
        let store = try SettingsStore(directory: directory)
        XCTAssertEqual(store.synchronousLevel, 2, "PRAGMA synchronous (2 is FULL)")
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0, "\(path): \(String(cString: strerror(errno)))")
        return info.st_mode & 0o7777
    }

    /// Made with umask 000, where SQLite alone would make the file 0644.
    func testTheStoreIsOwnerOnlyWhateverTheUmask() throws {
        let old = umask(0)
        defer { umask(old) }
        let nested = directory + "/a/b"
        let store = try SettingsStore(directory: nested)
        try store.set(namespace: "ns", key: "k", value: "v")
        XCTAssertEqual(mode(nested), 0o700)
        XCTAssertEqual(mode(directory + "/a"), 0o700)
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertEqual(mode(store.path + suffix), 0o600, "settings.sqlite3\(suffix)")
        }
    }

    /// A store an older pincer left readable by others is narrowed to 0600 when opened.
    func testAWiderStoreIsNarrowedWhenOpened() throws {
        do {
            let store = try SettingsStore(directory: directory)
            try store.set(namespace: "ns", key: "k", value: "v")
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: storePath + suffix) {
            XCTAssertEqual(chmod(storePath + suffix, 0o644), 0)
        }
        let store = try SettingsStore(directory: directory)
        XCTAssertEqual(try store.get(namespace: "ns", key: "k"), "v")
        XCTAssertEqual(mode(storePath), 0o600)
    }

    // MARK: Update (read-modify-write in one transaction)

    /// Two store instances (two connections, as two processes have) adding
    /// one to the same counter from two threads: with update, not one
    /// increment is lost.
    func testUpdateIsOneTransactionAcrossConnections() throws {
        let stores = [try SettingsStore(directory: directory), try SettingsStore(directory: directory)]
        let perThread = 300
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for store in stores {
            group.enter()
            Thread {
                for _ in 0..<perThread {
                    do {
                        try store.update(namespace: "c", key: "n") { current in .set(String((current.flatMap { Int($0) } ?? 0) + 1)) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                group.leave()
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertEqual(try stores[0].get(namespace: "c", key: "n"), "\(2 * perThread)")
    }

    func testUpdateKeepRemoveCancelAndReentry() throws {
        let store = try SettingsStore(directory: directory)
        try store.set(namespace: "ns", key: "k", value: "v")
        XCTAssertEqual(try store.update(namespace: "ns", key: "k") { current in
            XCTAssertEqual(current, "v")
            return .keep
        }, .keep)
        XCTAssertEqual(try store.update(namespace: "ns", key: "k") { _ in .cancel }, .cancel)
        XCTAssertEqual(try store.get(namespace: "ns", key: "k"), "v")
        XCTAssertEqual(try store.update(namespace: "ns", key: "k") { _ in .remove }, .remove)
        XCTAssertNil(try store.get(namespace: "ns", key: "k"))
        XCTAssertEqual(try store.update(namespace: "ns", key: "new") { current in
            XCTAssertNil(current)
            return .set("made")
        }, .set("made"))
        // From inside the callback the store refuses (it would wait for its own lock) and the update still applies.
        var inner = ""
        try store.update(namespace: "ns", key: "new") { _ in
            do { _ = try store.get(namespace: "ns", key: "other") } catch { inner = "\(error)" }
            return .set("after")
        }
        XCTAssertTrue(inner.contains("was called from inside an update of the same store"), inner)
        XCTAssertEqual(try store.get(namespace: "ns", key: "new"), "after")
        XCTAssertEqual(try store.all(namespace: "ns", prefix: "ne").map(\.key), ["new"])
    }

    // MARK: Default directory

    func testDefaultDirectory() {
        XCTAssertEqual(SettingsStore.defaultDirectory(environment: [
            "PINCER_STATE_DIR": "/p", "XDG_STATE_HOME": "/x", "HOME": "/h",
        ]), "/p")
        XCTAssertEqual(SettingsStore.defaultDirectory(environment: ["XDG_STATE_HOME": "/x", "HOME": "/h"]),
                       "/x/pincer")
        XCTAssertEqual(SettingsStore.defaultDirectory(environment: ["HOME": "/h"]), "/h/.local/state/pincer")
        XCTAssertEqual(SettingsStore.defaultDirectory(environment: [:]), "/tmp/pincer-\(getuid())")
    }
}

private struct StoreTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
