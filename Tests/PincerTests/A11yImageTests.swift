import Foundation
import XCTest
import PincerPluginKit
@testable import A11yAudit

/// The image layer of the accessibility audit: PNG reading and writing with
/// libpng, filling and pixel access. The PNGs read here
/// are made by a small independent encoder in Python (zlib + struct), so the
/// reader is checked against files libpng did not write.
final class A11yImageTests: XCTestCase {
    // MARK: Reading PNGs of every kind

    /// The test pattern every generated file encodes (in its own colour type).
    static func pattern(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let r = UInt8((x * 37 + y * 11) % 256), g = UInt8((x * 5 + y * 91) % 256)
        let b = UInt8((x * x + y * 3) % 256), a = UInt8((x * 13 + y * 7) % 256)
        return (r, g, b, a)
    }

    static let palette: [(UInt8, UInt8, UInt8, UInt8)] = (0..<16).map { (i: Int) -> (UInt8, UInt8, UInt8, UInt8) in
        let r = UInt8(i * 16), g = UInt8(255 - i * 16), b = UInt8(i * 7), a = UInt8(i * 17)
        return (r, g, b, a)
    }

    static let generator = #"""
import struct, sys, zlib, os
W, H = 13, 9
out = sys.argv[1]
def pat(x, y):
    return ((x*37 + y*11) % 256, (x*5 + y*91) % 256, (x*x + y*3) % 256, (x*13 + y*7) % 256)
PAL = [(i*16, 255 - i*16, i*7, i*17) for i in range(16)]
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
def pack(samples, depth):
    if depth == 8: return bytes(samples)
    if depth == 16: return b"".join(struct.pack(">H", s) for s in samples)
    out, acc, n = bytearray(), 0, 0
    for s in samples:
        acc = (acc << depth) | s; n += depth
        if n == 8: out.append(acc); acc, n = 0, 0
    if n: out.append(acc << (8 - n))
    return bytes(out)
def filt(row, prev, kind, bpp):
    if kind == 0: return bytes([0]) + row
    if kind == 1: return bytes([1]) + bytes((row[i] - (row[i-bpp] if i >= bpp else 0)) & 255 for i in range(len(row)))
    return bytes([2]) + bytes((row[i] - prev[i]) & 255 for i in range(len(row)))
def png(name, ctype, depth, px, channels, interlace=0, extra=b""):
    bpp = max(1, channels * depth // 8)
    passes = [(0,0,8,8),(4,0,8,8),(0,4,4,8),(2,0,4,4),(0,2,2,4),(1,0,2,2),(0,1,1,2)] if interlace else [(0,0,1,1)]
    data = bytearray()
    for (x0, y0, dx, dy) in passes:
        xs, ys = list(range(x0, W, dx)), list(range(y0, H, dy))
        if not xs or not ys: continue
        prev = None
        for n, y in enumerate(ys):
            row = pack([s for x in xs for s in px(x, y)], depth)
            if prev is None: prev = bytes(len(row))
            data += filt(row, prev, n % 3, bpp)
            prev = row
    ihdr = struct.pack(">IIBBBBB", W, H, depth, ctype, 0, 0, interlace)
    blob = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra + chunk(b"IDAT", zlib.compress(bytes(data))) + chunk(b"IEND", b"")
    open(os.path.join(out, name), "wb").write(blob)
plte = chunk(b"PLTE", bytes(c for p in PAL for c in p[:3])) + chunk(b"tRNS", bytes(p[3] for p in PAL))
png("rgb8.png", 2, 8, lambda x, y: pat(x, y)[:3], 3)
png("rgba8.png", 6, 8, lambda x, y: pat(x, y), 4)
png("grey8.png", 0, 8, lambda x, y: pat(x, y)[:1], 1)
png("greyalpha8.png", 4, 8, lambda x, y: (pat(x, y)[0], pat(x, y)[3]), 2)
png("grey1.png", 0, 1, lambda x, y: ((x + y) % 2,), 1)
png("palette8.png", 3, 8, lambda x, y: ((x + y) % 16,), 1, extra=plte)
png("palette4.png", 3, 4, lambda x, y: ((x + y) % 16,), 1, extra=plte)
png("rgb16.png", 2, 16, lambda x, y: tuple(c * 257 for c in pat(x, y)[:3]), 3)
png("rgba16.png", 6, 16, lambda x, y: tuple(c * 257 for c in pat(x, y)), 4)
png("interlaced_rgb8.png", 2, 8, lambda x, y: pat(x, y)[:3], 3, interlace=1)
png("interlaced_rgba8.png", 6, 8, lambda x, y: pat(x, y), 4, interlace=1)
png("interlaced_palette4.png", 3, 4, lambda x, y: ((x + y) % 16,), 1, interlace=1, extra=plte)
"""#

    static let pngDirectory: String = {
        let directory = Fixture.temporaryDirectory("a11y-image")
        let result = try! Fixture.run("/usr/bin/python3", ["-c", generator, directory])
        precondition(result.status == 0, "python PNG generator failed: \(result.stderr)")
        return directory
    }()

    func read(_ name: String) throws -> Bitmap {
        try Bitmap.readPNG(path: Self.pngDirectory + "/" + name)
    }

    /// Compares every pixel of `image` with `expected`, allowing `tolerance` per channel.
    func assertPixels(_ image: Bitmap, _ name: String, tolerance: Int = 0,
                      _ expected: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8), line: UInt = #line) {
        XCTAssertEqual(image.width, 13, name, line: line)
        XCTAssertEqual(image.height, 9, name, line: line)
        guard image.width == 13, image.height == 9 else { return }
        var mismatches: [String] = []
        for y in 0..<9 {
            for x in 0..<13 {
                let got = image.rgba(x: x, y: y), want = expected(x, y)
                let pairs = [(got.r, want.0), (got.g, want.1), (got.b, want.2), (got.a, want.3)]
                if pairs.contains(where: { abs(Int($0.0) - Int($0.1)) > tolerance }) {
                    mismatches.append("(\(x),\(y)) got \(got) want \(want)")
                }
            }
        }
        XCTAssert(mismatches.isEmpty, "\(name): \(mismatches.count) pixels differ, first \(mismatches.prefix(3))", line: line)
    }

    func testReadsEveryColourType() throws {
        let p = Self.pattern
        let pal = Self.palette
        assertPixels(try read("rgb8.png"), "rgb8") { x, y in let c = p(x, y); return (c.r, c.g, c.b, 255) }
        assertPixels(try read("rgba8.png"), "rgba8") { x, y in let c = p(x, y); return (c.r, c.g, c.b, c.a) }
        assertPixels(try read("grey8.png"), "grey8") { x, y in let c = p(x, y); return (c.r, c.r, c.r, 255) }
        assertPixels(try read("greyalpha8.png"), "greyalpha8") { x, y in let c = p(x, y); return (c.r, c.r, c.r, c.a) }
        assertPixels(try read("grey1.png"), "grey1") { x, y in let v: UInt8 = (x + y) % 2 == 1 ? 255 : 0; return (v, v, v, 255) }
        assertPixels(try read("palette8.png"), "palette8") { x, y in pal[(x + y) % 16] }
        assertPixels(try read("palette4.png"), "palette4") { x, y in pal[(x + y) % 16] }
        assertPixels(try read("rgb16.png"), "rgb16") { x, y in let c = p(x, y); return (c.r, c.g, c.b, 255) }
        assertPixels(try read("interlaced_rgb8.png"), "interlaced rgb8") { x, y in let c = p(x, y); return (c.r, c.g, c.b, 255) }
        assertPixels(try read("interlaced_rgba8.png"), "interlaced rgba8") { x, y in let c = p(x, y); return (c.r, c.g, c.b, c.a) }
        assertPixels(try read("interlaced_palette4.png"), "interlaced palette4") { x, y in pal[(x + y) % 16] }
    }

    /// 16-bit with alpha goes through libpng's linear, premultiplied path, so
    /// colour channels of nearly transparent pixels are approximate; alpha is exact.
    func testReads16BitAlpha() throws {
        let image = try read("rgba16.png")
        let p = Self.pattern
        assertPixels(image, "rgba16 alpha", tolerance: 0) { x, y in
            let got = image.rgba(x: x, y: y)
            return (got.r, got.g, got.b, p(x, y).a)
        }
        assertPixels(image, "rgba16 opaque-ish colours", tolerance: 2) { x, y in
            let c = p(x, y), got = image.rgba(x: x, y: y)
            return c.a >= 128 ? (c.r, c.g, c.b, c.a) : (got.r, got.g, got.b, got.a)
        }
    }

    func testRefusesCorruptPNGs() throws {
        let good = Array(try Data(contentsOf: URL(fileURLWithPath: Self.pngDirectory + "/rgb8.png")))
        XCTAssertNoThrow(try Bitmap.readPNG(good))

        func message(_ bytes: [UInt8]) -> String? {
            do {
                _ = try Bitmap.readPNG(bytes)
                return nil
            } catch {
                return error.message
            }
        }
        let truncated = Array(good.prefix(good.count - 30))
        let truncatedMessage = message(truncated)
        XCTAssertNotNil(truncatedMessage)
        XCTAssert(truncatedMessage?.hasPrefix("cannot read PNG: ") == true, truncatedMessage ?? "")

        // One byte of the compressed data changed, the CRC left as it was:
        // zlib's own check or the chunk CRC refuses it, whichever comes first.
        var badData = good
        let idat = indexOf(Array("IDAT".utf8), in: good)!
        badData[idat + 8] ^= 0x55
        let dataMessage = message(badData)
        XCTAssert(dataMessage?.hasPrefix("cannot read PNG: IDAT: ") == true, dataMessage ?? "accepted")

        // The data intact, its CRC wrong.
        var badCRC = good
        let length = Int(good[idat - 4]) << 24 | Int(good[idat - 3]) << 16 | Int(good[idat - 2]) << 8 | Int(good[idat - 1])
        badCRC[idat + 4 + length] ^= 0x01
        let crcMessage = message(badCRC)
        XCTAssert(crcMessage?.contains("CRC") == true, crcMessage ?? "accepted")

        var badHeader = good
        badHeader[20] ^= 0x01  // inside IHDR's width
        let headerMessage = message(badHeader)
        XCTAssert(headerMessage?.contains("CRC") == true, headerMessage ?? "accepted")

        let notPNG = message(Array("GIF89a, certainly not a PNG file at all".utf8))
        XCTAssert(notPNG?.lowercased().contains("png") == true, notPNG ?? "accepted")
        XCTAssertEqual(message([]), "cannot read PNG: no data")
        XCTAssertNotNil(message(Array(good.prefix(8))))

        // File errors name the path.
        do {
            _ = try Bitmap.readPNG(path: Self.pngDirectory + "/missing.png")
            XCTFail("read a missing file")
        } catch {
            XCTAssert(error.message.contains("missing.png"), error.message)
            XCTAssert(error.message.contains("No such file"), error.message)
        }
        let corruptPath = Self.pngDirectory + "/corrupt.png"
        try Data(badCRC).write(to: URL(fileURLWithPath: corruptPath))
        XCTAssertThrowsError(try Bitmap.readPNG(path: corruptPath)) { error in
            let text = (error as? LayoutError)?.message ?? ""
            XCTAssert(text.hasPrefix(corruptPath + ": cannot read PNG"), text)
        }
    }

    func indexOf(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    // MARK: Writing

    func testWriteReadRoundTrip() throws {
        var image = Bitmap(width: 37, height: 23, fill: Color(r: 10, g: 20, b: 30))
        for y in 0..<23 {
            for x in 0..<37 where (x + y) % 5 == 0 {
                image[x, y] = Color(r: UInt8(x * 6), g: UInt8(y * 11), b: UInt8((x * y) % 256), a: UInt8((x * 7 + y) % 256))
            }
        }
        image.fill(PixelRect(x: 3, y: 4, width: 10, height: 5), with: Color(r: 255, g: 0, b: 0))
        image.fill(PixelRect(x: 1, y: 12, width: 17, height: 7), with: Color(r: 255, g: 255, b: 255, a: 99))
        for fast in [false, true] {
            let bytes = try image.pngBytes(fast: fast)
            XCTAssertEqual(Array(bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            let back = try Bitmap.readPNG(bytes)
            XCTAssertEqual(back, image, "fast: \(fast)")
        }
        let path = Fixture.temporaryDirectory("a11y-image-write") + "/out.png"
        try image.writePNG(path: path)
        XCTAssertEqual(try Bitmap.readPNG(path: path), image)
        XCTAssertThrowsError(try Bitmap(width: 0, height: 3).pngBytes())
        XCTAssertThrowsError(try image.writePNG(path: "/nonexistent-directory/out.png")) { error in
            XCTAssert("\(error)".contains("/nonexistent-directory/out.png"), "\(error)")
        }
    }

    /// Our PNG checked by an independent reader: Python's zlib and CRC.
    func testWrittenPNGIsValidForPython() throws {
        let image = Bitmap(width: 50, height: 20, fill: Color(r: 1, g: 2, b: 3))
        let path = Fixture.temporaryDirectory("a11y-image-py") + "/out.png"
        try image.writePNG(path: path)
        let script = """
        import struct, sys, zlib
        b = open(sys.argv[1], "rb").read()
        assert b[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
        i, idat, info = 8, b"", None
        while i < len(b):
            n, = struct.unpack(">I", b[i:i+4]); kind = b[i+4:i+8]; data = b[i+8:i+8+n]
            crc, = struct.unpack(">I", b[i+8+n:i+12+n]); assert crc == zlib.crc32(kind + data) & 0xffffffff, kind
            if kind == b"IHDR": info = struct.unpack(">IIBBBBB", data)
            if kind == b"IDAT": idat += data
            i += 12 + n
        raw = zlib.decompress(idat)
        w, h = info[0], info[1]
        assert len(raw) == h * (w * 4 + 1), len(raw)
        print(w, h, info[2], info[3], raw[1:5].hex() if raw[0] == 0 else "filtered")
        """
        let result = try Fixture.run("/usr/bin/python3", ["-c", script, path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssert(result.stdout.hasPrefix("50 20 8 6"), result.stdout)
    }

    // MARK: Filling and pixel access

    func testFillBlendsAndClips() {
        var image = Bitmap(width: 10, height: 10, fill: Color(r: 255, g: 255, b: 255))
        image.fill(PixelRect(x: -5, y: -5, width: 8, height: 8), with: Color(red: 1, green: 0, blue: 0, alpha: 0.5))
        XCTAssertEqual(image.rgba(x: 0, y: 0).r, 255)
        XCTAssert((127...128).contains(image.rgba(x: 2, y: 2).g))
        XCTAssertEqual(image.rgba(x: 2, y: 2).a, 255)
        XCTAssertEqual(image.rgba(x: 3, y: 3).g, 255)  // outside the rect
        image.fill(PixelRect(x: 20, y: 20, width: 5, height: 5), with: Color(r: 0, g: 0, b: 0))  // entirely outside
        image.fill(PixelRect(x: 8, y: 8, width: 100, height: 100), with: Color(r: 0, g: 0, b: 255))
        XCTAssertEqual(image[9, 9], Color(r: 0, g: 0, b: 255))
        XCTAssertEqual(image[7, 7], Color(r: 255, g: 255, b: 255))

        // Over a transparent pixel, a translucent colour keeps its colour and alpha.
        var clear = Bitmap(width: 2, height: 2)
        clear.fill(clear.bounds, with: Color(r: 0, g: 200, b: 0, a: 100))
        XCTAssertEqual(clear.rgba(x: 1, y: 1).g, 200)
        XCTAssertEqual(clear.rgba(x: 1, y: 1).a, 100)
    }

    func testCropAccessor() {
        var image = Bitmap(width: 20, height: 10)
        for y in 0..<10 { for x in 0..<20 { image[x, y] = Color(r: UInt8(x), g: UInt8(y), b: 7, a: 255) } }
        let (sumX, area) = image.withCrop(PixelRect(x: 15, y: -2, width: 10, height: 5)) { bytes, stride, area in
            var total = 0
            for row in 0..<area.height {
                var i = row * stride
                for _ in 0..<area.width {
                    total += Int(bytes[i])
                    i += 4
                }
            }
            XCTAssertEqual(bytes[(1) * stride + (2) * 4 + 1], 1)  // pixel (17, 1): green is y
            return (total, area)
        }
        XCTAssertEqual(area, PixelRect(x: 15, y: 0, width: 5, height: 3))
        XCTAssertEqual(sumX, (15 + 16 + 17 + 18 + 19) * 3)
        let empty = image.withCrop(PixelRect(x: 30, y: 0, width: 5, height: 5)) { bytes, _, area in (bytes.count, area.isEmpty) }
        XCTAssert(empty == (0, true))
        var visited = 0
        image.forEachPixel(in: PixelRect(x: 2, y: 3, width: 3, height: 2)) { x, y, r, g, _, _ in
            XCTAssertEqual(Int(r), x)
            XCTAssertEqual(Int(g), y)
            visited += 1
        }
        XCTAssertEqual(visited, 6)
        let crop = image.cropped(PixelRect(x: 18, y: 8, width: 5, height: 5))
        XCTAssertEqual(crop.width, 2)
        XCTAssertEqual(crop.height, 2)
        XCTAssertEqual(crop[1, 1], image[19, 9])

        // Typed throws pass through.
        struct Stop: Error {}
        XCTAssertThrowsError(try image.withCrop(image.bounds) { (_, _, _) throws(Stop) -> Int in throw Stop() })
    }

    // The audit picture is tested in PictureTests.swift, drawn by librsvg from its SVG.

    // MARK: Text for pictures

    func testBase64MatchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in Array(0...12) + [255, 256, 257, 1000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            XCTAssertEqual(Base64.encode(bytes), Data(bytes).base64EncodedString(), "length \(length)")
        }
        XCTAssertEqual(Base64.encode(Array("Man".utf8)), "TWFu")
        XCTAssertEqual(Base64.encode(Array("Ma".utf8)), "TWE=")
    }

    func testXMLEscape() {
        XCTAssertEqual(XMLText.escape("a<b>&\"c'\u{0}\u{1F}\t\n\u{FFFE}é"), "a&lt;b&gt;&amp;&quot;c&apos;\u{FFFD}\u{FFFD}\t\n\u{FFFD}é")
    }

    // MARK: Performance

    /// A phone-sized screenshot: reading it and sampling thousands of crops.
    func testScreenshotSpeed() throws {
        var shot = Bitmap(width: 1080, height: 2400, fill: Color(r: 250, g: 250, b: 250))
        for i in 0..<60 {
            shot.fill(PixelRect(x: (i * 97) % 900, y: i * 39, width: 180, height: 30), with: Color(r: UInt8(i * 4), g: 90, b: 200))
            // Glyph-like strokes: a row of small dark bars on each band.
            for k in 0..<12 { shot.fill(PixelRect(x: 40 + k * 12, y: i * 39 + 5, width: 6, height: 21), with: Color(r: 20, g: 20, b: 20)) }
        }
        // A photo-like band (smooth gradient plus noise) so the PNG is as big as a real screenshot's.
        var seed: UInt32 = 12345
        for y in 1600..<2400 {
            for x in 0..<1080 {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                let noise = Int(seed >> 28)
                let i = (y * 1080 + x) * 4
                shot.pixels[i] = UInt8((x / 5 + noise) & 255)
                shot.pixels[i + 1] = UInt8((y / 4 + noise) & 255)
                shot.pixels[i + 2] = UInt8(((x + y) / 9 + noise) & 255)
            }
        }
        var clock = ContinuousClock.now
        let png = try shot.pngBytes()
        let writeTime = ContinuousClock.now - clock
        clock = .now
        let fastPNG = try shot.pngBytes(fast: true)
        let fastWriteTime = ContinuousClock.now - clock

        clock = .now
        let back = try Bitmap.readPNG(png)
        let readTime = ContinuousClock.now - clock
        XCTAssertEqual(back, shot)

        // 3000 crops of 300 × 60 pixels, a luminance-ish histogram each.
        clock = .now
        var checksum = 0
        for i in 0..<3000 {
            let rect = PixelRect(x: (i * 131) % 900, y: (i * 53) % 2340, width: 300, height: 60)
            checksum &+= back.withCrop(rect) { bytes, stride, area in
                var histogram = [Int](repeating: 0, count: 64)
                for row in 0..<area.height {
                    var j = row &* stride
                    for _ in 0..<area.width {
                        histogram[Int((UInt16(bytes[j]) &+ UInt16(bytes[j &+ 1]) &* 2 &+ UInt16(bytes[j &+ 2])) >> 4)] &+= 1
                        j &+= 4
                    }
                }
                return histogram.firstIndex { $0 > 0 } ?? -1
            }
        }
        let cropTime = ContinuousClock.now - clock
        print("A11yImage speed: 1080×2400 PNG \(png.count) bytes written in \(writeTime), fast \(fastPNG.count) bytes in \(fastWriteTime); read in \(readTime); 3000 crops of 300×60 in \(cropTime) (checksum \(checksum))")
        XCTAssertLessThan(readTime, .seconds(2))
    }
}
