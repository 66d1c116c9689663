#if canImport(Glibc)
import Glibc
#endif

/// Pictures that plugins write (the network waterfall, the audit overlay,
/// route maps): each is drawn once, as SVG, and written by the file's
/// extension: `.svg` as it is, `.png` rasterised by librsvg onto a cairo
/// image surface. Any other extension is refused, naming the file.
///
/// librsvg (Debian's librsvg2-2, which brings cairo) is loaded with dlopen on
/// the first PNG written, so a plugin's start-up does not pay for it and a
/// machine without it still writes SVG; it is never unloaded (GLib does not
/// survive being unloaded).
public enum PictureFile {
    public enum Kind: String, Sendable { case svg, png }

    /// The extensions accepted, as messages name them.
    public static let supported = ".png or .svg"

    /// The kind `path` asks for by its extension (any case), or an error
    /// naming the file and the supported extensions.
    public static func kind(of path: String) throws(CommandError) -> Kind {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        if let dot = name.lastIndex(of: "."), dot != name.startIndex,
           let kind = Kind(rawValue: name[name.index(after: dot)...].lowercased()) {
            return kind
        }
        throw CommandError.invalidArgument("cannot write the picture \(path): the file must end in \(supported)")
    }

    /// Writes the picture `svg` to `path` atomically, as SVG or PNG by the
    /// extension (see ``kind(of:)``). Returns what was written.
    @discardableResult
    public static func write(svg: String, to path: String) throws -> Kind {
        let kind = try kind(of: path)
        switch kind {
        case .svg:
            try TextFile.writeAtomically(svg, to: path)
        case .png:
            let image: Raster
            do { image = try png(svg: svg) } catch {
                throw CommandError("cannot write the picture \(path): \(error.message)")
            }
            try TextFile.writeAtomically(to: path) { write in try write(image.bytes) }
        }
        return kind
    }

    /// A PNG file's bytes and its size in pixels.
    public struct Raster: Sendable {
        public var bytes: [UInt8]
        public var width: Int
        public var height: Int
    }

    /// The largest picture drawn, each way and in all (ARGB, 4 bytes a pixel).
    public static let maximumSide = 32768
    public static let maximumPixels = 64 << 20

    /// `svg` rasterised at its intrinsic size (its `width` and `height`, in
    /// CSS pixels at 96 dpi, rounded up), on a transparent background.
    public static func png(svg: String) throws(CommandError) -> Raster {
        let rsvg = try Librsvg.shared.get()
        var error: UnsafeMutableRawPointer?
        let bytes = Array(svg.utf8)
        guard let handle = bytes.withUnsafeBufferPointer({ rsvg.newFromData($0.baseAddress, $0.count, &error) }) else {
            throw CommandError("the SVG does not parse: \(rsvg.consume(error))")
        }
        defer { rsvg.unref(UnsafeMutableRawPointer(handle)) }
        var w = 0.0, h = 0.0
        guard rsvg.intrinsicSize(handle, &w, &h) != 0 else {
            throw CommandError("the SVG has no width and height in absolute units, so its size in pixels is unknown")
        }
        guard w.isFinite, h.isFinite, w > 0, h > 0, w <= Double(maximumSide), h <= Double(maximumSide) else {
            throw CommandError("the SVG's size \(w) × \(h) pixels is not between 1 and \(maximumSide) each way")
        }
        let width = Int(w.rounded(.up)), height = Int(h.rounded(.up))
        guard width * height <= maximumPixels else {
            throw CommandError("the SVG's size \(width) × \(height) pixels is over \(maximumPixels) pixels")
        }

        let surface = rsvg.surfaceCreate(0 /* CAIRO_FORMAT_ARGB32 */, Int32(width), Int32(height))
        defer { rsvg.surfaceDestroy(surface) }
        try rsvg.check(rsvg.surfaceStatus(surface), "cannot make a \(width) × \(height) image")
        let cairo = rsvg.create(surface)
        defer { rsvg.destroy(cairo) }
        try rsvg.check(rsvg.status(cairo), "cannot draw on the image")
        var viewport = (x: 0.0, y: 0.0, width: Double(width), height: Double(height))
        let drawn = withUnsafePointer(to: &viewport) { rsvg.renderDocument(handle, cairo, UnsafeRawPointer($0), &error) }
        guard drawn != 0 else { throw CommandError("librsvg cannot draw the SVG: \(rsvg.consume(error))") }
        rsvg.surfaceFlush(surface)

        final class Sink { var bytes: [UInt8] = [] }
        let sink = Sink()
        let status = rsvg.writeToPNGStream(surface, { closure, data, length in
            guard let closure, let data else { return 11 /* CAIRO_STATUS_WRITE_ERROR */ }
            Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue().bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
            return 0
        }, Unmanaged.passUnretained(sink).toOpaque())
        withExtendedLifetime(sink) {}
        try rsvg.check(status, "cannot encode the PNG")
        return Raster(bytes: sink.bytes, width: width, height: height)
    }

    /// The librsvg and cairo functions used, found once.
    struct Librsvg: @unchecked Sendable {
        typealias GError = UnsafeMutablePointer<UnsafeMutableRawPointer?>
        let newFromData: @convention(c) (UnsafePointer<UInt8>?, Int, GError?) -> OpaquePointer?
        let intrinsicSize: @convention(c) (OpaquePointer?, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?) -> Int32
        let renderDocument: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, GError?) -> Int32
        let unref: @convention(c) (UnsafeMutableRawPointer?) -> Void
        let errorFree: @convention(c) (UnsafeMutableRawPointer?) -> Void
        let surfaceCreate: @convention(c) (Int32, Int32, Int32) -> OpaquePointer?
        let surfaceStatus: @convention(c) (OpaquePointer?) -> Int32
        let surfaceFlush: @convention(c) (OpaquePointer?) -> Void
        let surfaceDestroy: @convention(c) (OpaquePointer?) -> Void
        let create: @convention(c) (OpaquePointer?) -> OpaquePointer?
        let status: @convention(c) (OpaquePointer?) -> Int32
        let destroy: @convention(c) (OpaquePointer?) -> Void
        let writeToPNGStream: @convention(c) (OpaquePointer?, @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, UInt32) -> Int32,
                                              UnsafeMutableRawPointer?) -> Int32
        let statusText: @convention(c) (Int32) -> UnsafePointer<CChar>?

        /// Loaded on first use (Swift initialises globals lazily and once).
        static let shared: Result<Librsvg, CommandError> = load()

        static let libraries = (rsvg: "librsvg-2.so.2", cairo: "libcairo.so.2")

        static func load(rsvg rsvgName: String = libraries.rsvg, cairo cairoName: String = libraries.cairo) -> Result<Librsvg, CommandError> {
            func open(_ name: String) -> Result<UnsafeMutableRawPointer, CommandError> {
                guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
                    let why = dlerror().map { String(cString: $0) } ?? "not found"
                    return .failure(CommandError("PNG pictures need librsvg (Debian's librsvg2-2; run `bash scripts/deps`), "
                                                 + "and \(name) cannot be loaded: \(why); write an .svg instead"))
                }
                return .success(handle)
            }
            let rsvg: UnsafeMutableRawPointer, cairo: UnsafeMutableRawPointer
            switch (open(rsvgName), open(cairoName)) {
            case (.failure(let e), _), (_, .failure(let e)): return .failure(e)
            case (.success(let r), .success(let c)): (rsvg, cairo) = (r, c)
            }
            var missing: [String] = []
            // GLib's functions come from librsvg's own dependencies (dlsym searches them).
            func symbol<F>(_ library: UnsafeMutableRawPointer, _ name: String, as _: F.Type) -> F? {
                guard let p = dlsym(library, name) else { missing.append(name); return nil }
                return unsafeBitCast(p, to: F.self)
            }
            let table = (
                symbol(rsvg, "rsvg_handle_new_from_data", as: (@convention(c) (UnsafePointer<UInt8>?, Int, GError?) -> OpaquePointer?).self),
                symbol(rsvg, "rsvg_handle_get_intrinsic_size_in_pixels",
                       as: (@convention(c) (OpaquePointer?, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?) -> Int32).self),
                symbol(rsvg, "rsvg_handle_render_document", as: (@convention(c) (OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, GError?) -> Int32).self),
                symbol(rsvg, "g_object_unref", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
                symbol(rsvg, "g_error_free", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
                symbol(cairo, "cairo_image_surface_create", as: (@convention(c) (Int32, Int32, Int32) -> OpaquePointer?).self),
                symbol(cairo, "cairo_surface_status", as: (@convention(c) (OpaquePointer?) -> Int32).self),
                symbol(cairo, "cairo_surface_flush", as: (@convention(c) (OpaquePointer?) -> Void).self),
                symbol(cairo, "cairo_surface_destroy", as: (@convention(c) (OpaquePointer?) -> Void).self),
                symbol(cairo, "cairo_create", as: (@convention(c) (OpaquePointer?) -> OpaquePointer?).self),
                symbol(cairo, "cairo_status", as: (@convention(c) (OpaquePointer?) -> Int32).self),
                symbol(cairo, "cairo_destroy", as: (@convention(c) (OpaquePointer?) -> Void).self),
                symbol(cairo, "cairo_surface_write_to_png_stream",
                       as: (@convention(c) (OpaquePointer?, @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, UInt32) -> Int32,
                                            UnsafeMutableRawPointer?) -> Int32).self),
                symbol(cairo, "cairo_status_to_string", as: (@convention(c) (Int32) -> UnsafePointer<CChar>?).self))
            guard let a = table.0, let b = table.1, let c = table.2, let d = table.3, let e = table.4, let f = table.5, let g = table.6,
                  let h = table.7, let i = table.8, let j = table.9, let k = table.10, let l = table.11, let m = table.12, let n = table.13 else {
                return .failure(CommandError("PNG pictures need librsvg 2.52 or later with cairo; missing: \(missing.joined(separator: ", "))"))
            }
            return .success(Librsvg(newFromData: a, intrinsicSize: b, renderDocument: c, unref: d, errorFree: e, surfaceCreate: f,
                                    surfaceStatus: g, surfaceFlush: h, surfaceDestroy: i, create: j, status: k, destroy: l,
                                    writeToPNGStream: m, statusText: n))
        }

        /// A GError's message, and the error freed.
        func consume(_ error: UnsafeMutableRawPointer?) -> String {
            guard let error else { return "no reason given" }
            defer { errorFree(error) }
            // struct GError { GQuark domain; gint code; gchar *message; }
            let message = error.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self)
            return message.map { String(cString: $0) } ?? "no reason given"
        }

        func check(_ status: Int32, _ what: String) throws(CommandError) {
            guard status != 0 else { return }
            throw CommandError("\(what): cairo says \(statusText(status).map { String(cString: $0) } ?? "status \(status)")")
        }
    }
}
