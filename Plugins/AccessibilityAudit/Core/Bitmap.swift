import CPNG
#if canImport(Glibc)
import Glibc
#endif

/// A rectangle of whole pixels, origin top left.
public struct PixelRect: Sendable, Equatable, CustomStringConvertible {
    public var x: Int, y: Int, width: Int, height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The overlap of two rectangles; empty (zero width or height) when they do not overlap.
    public func intersection(_ other: PixelRect) -> PixelRect {
        let left = Swift.max(x, other.x), top = Swift.max(y, other.y)
        let right = Swift.min(maxX, other.maxX), bottom = Swift.min(maxY, other.maxY)
        guard right > left, bottom > top else { return PixelRect(x: left, y: top, width: 0, height: 0) }
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    public var description: String { "(\(x), \(y), \(width) × \(height))" }
}

/// An 8-bit RGBA image, rows top to bottom, not premultiplied (as PNG stores it).
///
/// Pixel (x, y) is at `pixels[(y * width + x) * 4 ..< +4]` in the order
/// red, green, blue, alpha. For hot loops use ``rgba(x:y:)`` (no `Color`
/// conversion) or, better, ``withCrop(_:_:)`` which hands out the bytes of a
/// rectangle with one bounds check for the whole crop.
public struct Bitmap: Sendable, Equatable {
    public let width: Int, height: Int
    /// RGBA, `width * height * 4` bytes.
    public var pixels: [UInt8]

    /// The largest image read or made from data (100 million pixels, 400 MB).
    public static let maximumPixelCount = 100_000_000

    /// An image filled with one colour (transparent black by default).
    public init(width: Int, height: Int, fill: Color = Color(red: 0, green: 0, blue: 0, alpha: 0)) {
        precondition(width >= 0 && height >= 0, "Bitmap size must not be negative")
        self.width = width
        self.height = height
        let (r, g, b, a) = Bitmap.bytes(fill)
        let count = width * height * 4
        if r == g && g == b && b == a {
            pixels = [UInt8](repeating: r, count: count)
        } else {
            let pattern = Bitmap.word(r, g, b, a)
            pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                var offset = 0
                while offset < count {
                    raw.storeBytes(of: pattern, toByteOffset: offset, as: UInt32.self)
                    offset += 4
                }
                initialized = count
            }
        }
    }

    /// An image from RGBA bytes (`width * height * 4` of them).
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height * 4,
                     "Bitmap needs width * height * 4 bytes")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The whole image: (0, 0, width × height).
    public var bounds: PixelRect { PixelRect(x: 0, y: 0, width: width, height: height) }
    /// Bytes from one row to the next: `width * 4`.
    public var rowStride: Int { width * 4 }

    // MARK: Pixels

    /// The colour at (x, y). Traps when outside the image.
    public subscript(x: Int, y: Int) -> Color {
        get {
            let p = rgba(x: x, y: y)
            return Color(r: p.r, g: p.g, b: p.b, a: p.a)
        }
        set {
            precondition(x >= 0 && y >= 0 && x < width && y < height, "pixel (\(x), \(y)) outside \(width) × \(height)")
            let (r, g, b, a) = Bitmap.bytes(newValue)
            let i = (y * width + x) * 4
            pixels[i] = r
            pixels[i + 1] = g
            pixels[i + 2] = b
            pixels[i + 3] = a
        }
    }

    /// The raw bytes at (x, y), without converting to `Color`. Traps when outside the image.
    @inlinable
    public func rgba(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        precondition(x >= 0 && y >= 0 && x < width && y < height, "pixel outside the image")
        let i = (y &* width &+ x) &* 4
        return pixels.withUnsafeBufferPointer { p in (p[i], p[i &+ 1], p[i &+ 2], p[i &+ 3]) }
    }

    /// The fast way to read a region: calls `body` once with the bytes of
    /// `rect` clipped to the image (`area`, possibly empty), without copying.
    ///
    /// `bytes` starts at pixel (`area.x`, `area.y`); pixel (x, y) of the image
    /// (inside `area`) is at `bytes[(y - area.y) * rowStride + (x - area.x) * 4]`
    /// (red, then green, blue, alpha). `rowStride` is the image's (`width * 4`),
    /// so the bytes between the end of one crop row and the start of the next
    /// belong to pixels outside the crop. `bytes` is empty when `area` is.
    /// The pointer is valid only inside `body`.
    ///
    ///     let sum = shot.withCrop(rect) { bytes, stride, area in
    ///         var total = 0
    ///         for row in 0..<area.height {
    ///             var i = row * stride
    ///             for _ in 0..<area.width { total += Int(bytes[i]); i += 4 }
    ///         }
    ///         return total
    ///     }
    @inlinable
    public func withCrop<R, E: Error>(
        _ rect: PixelRect,
        _ body: (_ bytes: UnsafeBufferPointer<UInt8>, _ rowStride: Int, _ area: PixelRect) throws(E) -> R
    ) throws(E) -> R {
        let area = rect.intersection(bounds)
        let stride = width &* 4
        return try pixels.withUnsafeBufferPointer { (all: UnsafeBufferPointer<UInt8>) throws(E) -> R in
            guard !area.isEmpty, let base = all.baseAddress else {
                return try body(UnsafeBufferPointer(start: nil, count: 0), stride, area)
            }
            let start = area.y &* stride &+ area.x &* 4
            let count = (area.height &- 1) &* stride &+ area.width &* 4
            return try body(UnsafeBufferPointer(start: base + start, count: count), stride, area)
        }
    }

    /// Calls `body` for every pixel of `rect` clipped to the image, row by
    /// row, with its coordinates and bytes. Built on ``withCrop(_:_:)``.
    @inlinable
    public func forEachPixel(in rect: PixelRect, _ body: (_ x: Int, _ y: Int, _ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) -> Void) {
        withCrop(rect) { bytes, stride, area in
            for row in 0..<area.height {
                var i = row &* stride
                for column in 0..<area.width {
                    body(area.x &+ column, area.y &+ row, bytes[i], bytes[i &+ 1], bytes[i &+ 2], bytes[i &+ 3])
                    i &+= 4
                }
            }
        }
    }

    /// A copy of `rect` clipped to the image.
    public func cropped(_ rect: PixelRect) -> Bitmap {
        withCrop(rect) { bytes, stride, area in
            let rowBytes = area.width * 4
            let count = area.height * rowBytes
            let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                for row in 0..<area.height {
                    let source = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[(row * stride)..<(row * stride + rowBytes)]))
                    UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[(row * rowBytes)..<((row + 1) * rowBytes)])).copyMemory(from: source)
                }
                initialized = count
            }
            return Bitmap(width: max(area.width, 0), height: max(area.height, 0), pixels: out)
        }
    }

    // MARK: Drawing

    /// Fills `rect` (clipped to the image) with `color`: replaces the pixels
    /// when the colour is opaque, else draws it over them (source-over).
    public mutating func fill(_ rect: PixelRect, with color: Color) {
        let area = rect.intersection(bounds)
        guard !area.isEmpty else { return }
        let (r, g, b, a) = Bitmap.bytes(color)
        guard a > 0 else { return }
        let stride = width * 4
        if a == 255 {
            let pattern = Bitmap.word(r, g, b, a)
            pixels.withUnsafeMutableBytes { raw in
                for y in area.y..<area.maxY {
                    var offset = y * stride + area.x * 4
                    for _ in 0..<area.width {
                        raw.storeBytes(of: pattern, toByteOffset: offset, as: UInt32.self)
                        offset += 4
                    }
                }
            }
            return
        }
        let sa = Int(a), inverse = 255 - Int(a)
        let sr = Int(r) * sa, sg = Int(g) * sa, sb = Int(b) * sa
        pixels.withUnsafeMutableBufferPointer { p in
            for y in area.y..<area.maxY {
                var i = y * stride + area.x * 4
                for _ in 0..<area.width {
                    let da = Int(p[i + 3])
                    if da == 255 {
                        p[i] = UInt8((sr + Int(p[i]) * inverse + 127) / 255)
                        p[i + 1] = UInt8((sg + Int(p[i + 1]) * inverse + 127) / 255)
                        p[i + 2] = UInt8((sb + Int(p[i + 2]) * inverse + 127) / 255)
                    } else {
                        // General source-over with straight alpha, in units of 255².
                        let weight = da * inverse
                        let outA = sa * 255 + weight
                        p[i] = UInt8((sr * 255 + Int(p[i]) * weight + outA / 2) / outA)
                        p[i + 1] = UInt8((sg * 255 + Int(p[i + 1]) * weight + outA / 2) / outA)
                        p[i + 2] = UInt8((sb * 255 + Int(p[i + 2]) * weight + outA / 2) / outA)
                        p[i + 3] = UInt8((outA + 127) / 255)
                    }
                    i += 4
                }
            }
        }
    }

    // MARK: PNG

    /// Reads a PNG of any kind (palette, grey, 1-16 bits, alpha, tRNS,
    /// interlaced) into RGBA8 with libpng's simplified API. 16-bit files
    /// without colour-space chunks are taken as sRGB-encoded (like 8-bit
    /// ones), so 0xABAB reads as 0xAB. Errors carry libpng's message, e.g.
    /// "cannot read PNG: IDAT: CRC error".
    public static func readPNG(_ bytes: [UInt8]) throws(LayoutError) -> Bitmap {
        guard !bytes.isEmpty else { throw LayoutError("cannot read PNG: no data") }
        let result: Result<Bitmap, LayoutError> = bytes.withUnsafeBytes { data in
            // The memory must stay valid from begin_read to finish_read: both happen here.
            var image = png_image()
            image.version = UInt32(PNG_IMAGE_VERSION)
            guard png_image_begin_read_from_memory(&image, data.baseAddress, data.count) != 0 else {
                return .failure(LayoutError("cannot read PNG: \(message(of: image))"))
            }
            let width = Int(image.width), height = Int(image.height)
            guard width > 0, height > 0, width.multipliedReportingOverflow(by: height).partialValue <= maximumPixelCount,
                  width <= Int(Int32.max) / 4 else {
                png_image_free(&image)
                return .failure(LayoutError("cannot read PNG: \(width) × \(height) pixels is too large (at most \(maximumPixelCount) pixels)"))
            }
            image.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
            image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
            let count = width * height * 4
            var ok = false
            let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                ok = png_image_finish_read(&image, nil, buffer.baseAddress, Int32(width * 4), nil) != 0
                initialized = ok ? count : 0
            }
            guard ok else { return .failure(LayoutError("cannot read PNG: \(message(of: image))")) }
            return .success(Bitmap(width: width, height: height, pixels: pixels))
        }
        return try result.get()
    }

    /// Reads a PNG file; errors name the path.
    public static func readPNG(path: String) throws(LayoutError) -> Bitmap {
        let bytes = try FileBytes.read(path)
        do {
            return try readPNG(bytes)
        } catch {
            throw LayoutError("\(path): \(error.message)")
        }
    }

    /// The image as PNG (8-bit RGBA, with an sRGB chunk), zlib's default compression.
    /// `fast` trades size for speed (no filtering, lower compression level).
    public func pngBytes(fast: Bool = false) throws(LayoutError) -> [UInt8] {
        guard width > 0, height > 0 else { throw LayoutError("cannot write PNG: the image is empty (\(width) × \(height))") }
        guard width <= Int(Int32.max) / 4 else { throw LayoutError("cannot write PNG: the image is too wide") }
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
        image.flags = fast ? UInt32(PNG_IMAGE_FLAG_FAST) : 0
        // PNG_IMAGE_PNG_SIZE_MAX, which Swift cannot import: the raw rows, zlib's
        // worst-case overhead, one chunk header per zlib buffer, and the fixed chunks.
        let raw = height * (width * 4 + 1)
        let capacity = raw + (raw + 7) / 8 + (raw + 63) / 64 + 11 + 12 * (raw / 8192 + 1) + 1024
        var failure: String?
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            var size = capacity
            let ok = pixels.withUnsafeBytes { source in
                png_image_write_to_memory(&image, buffer.baseAddress, &size, 0, source.baseAddress, Int32(width * 4), nil)
            }
            if ok != 0 && size <= capacity {
                initialized = size
            } else {
                initialized = 0
                failure = ok != 0 ? "needs \(size) bytes" : Bitmap.message(of: image)
            }
        }
        if let failure { throw LayoutError("cannot write PNG: \(failure)") }
        return bytes
    }

    /// Writes the image as a PNG file (replacing it).
    public func writePNG(path: String, fast: Bool = false) throws(LayoutError) {
        try FileBytes.write(try pngBytes(fast: fast), to: path)
    }

    // MARK: Helpers

    /// libpng's message, a C string in a fixed 64-byte field.
    static func message(of image: png_image) -> String {
        let text = withUnsafeBytes(of: image.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return text.isEmpty ? "unknown libpng error" : text
    }

    /// A colour's 8-bit channels (clamped, NaN as 0).
    static func bytes(_ color: Color) -> (UInt8, UInt8, UInt8, UInt8) {
        func channel(_ value: Double) -> UInt8 {
            guard value > 0 else { return 0 }
            guard value < 1 else { return 255 }
            return UInt8((value * 255).rounded())
        }
        return (channel(color.red), channel(color.green), channel(color.blue), channel(color.alpha))
    }

    /// Four bytes as a word in memory order, whatever the host's endianness.
    static func word(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) -> UInt32 {
        var value: UInt32 = 0
        withUnsafeMutableBytes(of: &value) { $0[0] = r; $0[1] = g; $0[2] = b; $0[3] = a }
        return value
    }
}

/// Whole-file reads and writes with Glibc (the module does not use Foundation).
enum FileBytes {
    static func read(_ path: String) throws(LayoutError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LayoutError("cannot open \(path): \(errorText())") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw LayoutError("cannot read \(path): \(errorText())") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw LayoutError("cannot read \(path): not a regular file") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LayoutError("cannot read \(path): \(errorText())")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }

    static func write(_ bytes: [UInt8], to path: String) throws(LayoutError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LayoutError("cannot create \(path): \(errorText())") }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                let text = errorText()
                close(fd)
                throw LayoutError("cannot write \(path): \(text)")
            }
            offset += n
        }
        guard close(fd) == 0 else { throw LayoutError("cannot write \(path): \(errorText())") }
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}
