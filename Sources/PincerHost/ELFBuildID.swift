#if canImport(Glibc)
import Glibc
#endif

/// Reads the GNU build id (the NT_GNU_BUILD_ID note the linker writes) of an
/// ELF file, so the plugin registry can tell a rebuilt library from the one
/// it scanned even when size and times match. The file is untrusted: every
/// offset and size is checked against the file and against overflow, at most
/// `maxProgramHeaders` headers and `maxNoteBytes` of notes are read, and a
/// file that is not a little-endian ELF, or has no such note, has no build id.
public enum ELFBuildID {
    public static let maxProgramHeaders = 4096
    public static let maxNoteBytes = 1 << 16

    /// The build id as lowercase hex, or nil.
    public static func read(path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return parse { offset, count in
            var bytes = [UInt8](repeating: 0, count: count)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? bytes : nil
        }
    }

    /// The build id of an ELF image held in memory (what the fuzz target feeds).
    public static func parse(bytes: [UInt8]) -> String? {
        parse { offset, count in
            guard offset >= 0, count >= 0, offset <= bytes.count, count <= bytes.count - offset else { return nil }
            return Array(bytes[offset..<offset + count])
        }
    }

    /// `read(offset, count)` returns exactly `count` bytes at `offset`, or nil.
    static func parse(read: (Int, Int) -> [UInt8]?) -> String? {
        guard let header = read(0, 52) else { return nil }
        guard header[0] == 0x7f, header[1] == 0x45, header[2] == 0x4c, header[3] == 0x46 else { return nil }
        let is64: Bool
        switch header[4] {
        case 1: is64 = false
        case 2: is64 = true
        default: return nil
        }
        guard header[5] == 1 else { return nil } // little-endian only (every Linux target Pincer builds for)
        let full: [UInt8]
        if is64 {
            guard let h = read(0, 64) else { return nil }
            full = h
        } else {
            full = header
        }
        let phoff = is64 ? le(full, 32, 8) : le(full, 28, 4)
        let phentsize = Int(is64 ? le(full, 54, 2) : le(full, 42, 2))
        let phnum = Int(is64 ? le(full, 56, 2) : le(full, 44, 2))
        let minimumEntry = is64 ? 56 : 32
        guard phnum > 0, phnum <= maxProgramHeaders, phentsize >= minimumEntry else { return nil }
        let (tableSize, o1) = phentsize.multipliedReportingOverflow(by: phnum)
        guard !o1, phoff <= UInt64(Int.max), let table = read(Int(phoff), tableSize) else { return nil }
        for i in 0..<phnum {
            let base = i * phentsize // < tableSize, no overflow
            guard le(table, base, 4) == 4 else { continue } // PT_NOTE
            let offset = is64 ? le(table, base + 8, 8) : le(table, base + 4, 4)
            let size = is64 ? le(table, base + 32, 8) : le(table, base + 16, 4)
            guard offset <= UInt64(Int.max), size <= UInt64(maxNoteBytes), let notes = read(Int(offset), Int(size)) else { continue }
            if let id = buildID(inNotes: notes) { return id }
        }
        return nil
    }

    /// Walks one note segment: namesz, descsz, type, then name and desc, each padded to 4 bytes.
    static func buildID(inNotes notes: [UInt8]) -> String? {
        var at = 0
        while notes.count - at >= 12 {
            let nameSize = Int(le(notes, at, 4)), descSize = Int(le(notes, at + 4, 4)), type = le(notes, at + 8, 4)
            let nameStart = at + 12
            guard let namePadded = padded(nameSize), let descPadded = padded(descSize),
                  namePadded <= notes.count - nameStart else { return nil }
            let descStart = nameStart + namePadded
            guard descPadded <= notes.count - descStart else { return nil }
            if type == 3, nameSize == 4, notes[nameStart..<nameStart + 4].elementsEqual([0x47, 0x4e, 0x55, 0]), descSize > 0 {
                let hex = Array("0123456789abcdef".utf8)
                var out: [UInt8] = []
                for b in notes[descStart..<descStart + descSize] { out.append(hex[Int(b >> 4)]); out.append(hex[Int(b & 15)]) }
                return String(decoding: out, as: UTF8.self)
            }
            at = descStart + descPadded
        }
        return nil
    }

    private static func padded(_ n: Int) -> Int? {
        guard n >= 0, n <= maxNoteBytes else { return nil }
        return (n + 3) & ~3
    }

    /// A little-endian unsigned integer of `width` bytes at `at` (the caller keeps it in bounds).
    private static func le(_ b: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
        guard at >= 0, width <= b.count, at <= b.count - width else { return 0 }
        var v: UInt64 = 0
        for i in (0..<width).reversed() { v = v << 8 | UInt64(b[at + i]) }
        return v
    }
}
