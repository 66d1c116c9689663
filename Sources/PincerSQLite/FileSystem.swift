// File-system steps of opening a store (Glibc): directories, owner-only
// modes, and setting an unreadable file aside without ever deleting it.

import Glibc

enum FileSystem {
    struct Identity: Equatable {
        let device: UInt
        let inode: UInt
    }

    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func failure(_ path: String, _ operation: String, _ code: Int32, _ description: String) -> SQLiteError {
        SQLiteError(path: path, operation: operation, code: 0, message: errorText(code), description: description)
    }

    /// The directory part of `path` ("." when it has none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Device and inode of the file at `path` (not following a final symlink), nil if absent.
    static func identity(of path: String) -> Identity? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Identity(device: UInt(info.st_dev), inode: UInt(info.st_ino))
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// `mkdir -p` with mode 0700 for the directories it creates.
    static func makeDirectories(_ directory: String, neededFor file: String, what: String) throws(SQLiteError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw SQLiteError(path: file, operation: "creating the directory", code: 0, message: "not a directory",
                                  description: "could not create \(what) \(file): \(directory) exists and is not a directory")
            }
            return
        }
        var trimmed = Substring(directory)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        if let slash = trimmed.lastIndex(of: "/") {
            let parent = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
            if parent != String(trimmed) {
                try makeDirectories(parent, neededFor: file, what: what)
            }
        }
        if mkdir(directory, 0o700) != 0 {
            let code = errno
            if code == EEXIST, stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return }
            throw failure(file, "creating directory \(directory)", code,
                          "could not create directory \(directory) for \(what) \(file): \(errorText(code))")
        }
        // mkdir's mode is reduced by the umask; the directory is the owner's alone whatever it is.
        chmod(directory, 0o700)
    }

    /// Creates the store file owner-only (0600, exactly: the umask only
    /// removes bits, so fchmod sets it) before SQLite opens it, as SQLite
    /// would create it 0644 less the umask. A store of ours found readable
    /// by others (made by an older pincer) is narrowed to 0600, with its
    /// -wal and -shm, whose modes SQLite copies from the database file.
    static func makePrivate(_ path: String, what: String) throws(SQLiteError) {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 {
            let failed = fchmod(fd, 0o600) != 0 ? errno : 0
            close(fd)
            if failed != 0 {
                throw failure(path, "making it private", failed, "could not make \(what) \(path) private (mode 0600): \(errorText(failed))")
            }
            return
        }
        guard errno == EEXIST else { return }  // let SQLite report why it cannot open the file
        for file in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            guard lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == getuid(),
                  info.st_mode & 0o077 != 0 else { continue }
            if chmod(file, 0o600) != 0 {
                let code = errno
                throw failure(path, "making it private", code, "could not make \(what) file \(file) private (mode 0600): \(errorText(code))")
            }
        }
    }

    /// Moves an unreadable store (and its -wal/-shm) to `<path>.unreadable-<UTC time>[-N]`,
    /// never overwriting anything. Returns nil (moving nothing) if the file at `path`
    /// is no longer the one found unreadable (another process dealt with it).
    static func setAside(_ path: String, ifStill expected: Identity, what: String) throws(SQLiteError) -> String? {
        guard identity(of: path) == expected else { return nil }
        let base = path + ".unreadable-" + utcTimestamp()
        var destination = base
        var attempt = 0
        while true {
            let code = moveNoReplace(path, destination)
            if code == 0 { break }
            if code == ENOENT, identity(of: path) == nil { return nil }  // someone else moved it
            guard code == EEXIST else {
                throw failure(path, "setting it aside", code, "\(what) \(path) could not be read, and moving it aside to "
                    + "\(destination) failed: \(errorText(code))")
            }
            attempt += 1
            destination = base + "-\(attempt)"
        }
        // A leftover -wal must not be paired with the new database, so move it too.
        for suffix in ["-wal", "-shm"] where exists(path + suffix) {
            let code = moveNoReplace(path + suffix, destination + suffix)
            if code != 0 && code != ENOENT {
                throw failure(path, "setting it aside", code, "\(what) \(path) could not be read; moved it to \(destination), "
                    + "but moving \(path + suffix) to \(destination + suffix) failed: \(errorText(code))")
            }
        }
        return destination
    }

    /// Renames without ever replacing an existing `to`. Returns 0 or an errno value.
    static func moveNoReplace(_ from: String, _ to: String) -> Int32 {
        // link() fails with EEXIST rather than replacing; then drop the old name.
        if link(from, to) == 0 {
            if unlink(from) != 0 {
                let code = errno
                unlink(to)
                return code
            }
            return 0
        }
        let code = errno
        switch code {
        case EPERM, ENOTSUP, EOPNOTSUPP, EXDEV, EMLINK:
            // File system without hard links: check, then rename (small race, best effort).
            if exists(to) { return EEXIST }
            return rename(from, to) == 0 ? 0 : errno
        default:
            return code
        }
    }

    /// Current UTC time as YYYYMMDDTHHMMSS.
    static func utcTimestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return pad(parts.tm_year + 1900, 4) + pad(parts.tm_mon + 1, 2) + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + pad(parts.tm_min, 2) + pad(parts.tm_sec, 2)
    }
}

/// File steps a store needs beyond opening (an old file it migrates from).
public enum StoreFiles {
    /// Renames `from` to `to` without ever replacing an existing `to`.
    /// Returns 0 or an errno value (EEXIST when `to` exists).
    public static func moveNoReplace(_ from: String, _ to: String) -> Int32 { FileSystem.moveNoReplace(from, to) }

    /// The current UTC time as YYYYMMDDTHHMMSS, for names of files set aside.
    public static func utcTimestamp() -> String { FileSystem.utcTimestamp() }
}
