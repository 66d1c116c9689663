// Location spoofing and route simulation (after Scyther's location spoofing
// and `xcrun simctl location`): places, routes from GPX and GeoJSON, and
// playback that apps receive through "pincer.location/1"
// (SDK/include/pincer/location.h). Geodesy, formats and playback live in
// GeoRoutes; this is the glue.
import PincerPluginKit
import GeoRoutes

let export = PluginExport(PluginMetadata(
    id: "dev.pincer.location", shortName: "loc", name: "Location", version: "1.0.0",
    summary: "Spoof the location: presets, custom places, GPX and GeoJSON routes played like simctl")) { Location() }

@_cdecl("pincer_plugin_entry")
public func pincerPluginEntry(_ hostMajor: UInt32, _ hostMinor: UInt32) -> UnsafeRawPointer? {
    export.entry(hostMajor: hostMajor)
}

final class Location: PincerPlugin {
    static let section = "location"
    private var service: LocationService?

    func register(with host: PluginHost) throws {
        // Init only registers: the settings document is read by the first
        // entry, command or service call, the route store by the first that
        // needs an imported route.
        let store = FirstUse { LocationStore(host: host) }
        let routes = Routes(host: host, settings: store)
        let service = LocationService(store: store, routes: routes)
        self.service = service
        try host.addSection(id: Location.section, title: "Location", order: 340)
        try host.addPluginValueEntry(.toggle, id: "spoofing", title: "Spoof location", section: Location.section,
                                     summary: "Off: the app sees the real location",
                                     read: { (try store.get().snapshot.spoofing ? "true" : "false", []) },
                                     set: { value throws in
                                         let store = try store.get()
                                         if value == "true" {
                                             let s = store.snapshot
                                             let c = s.current ?? Presets.cities[0].coordinate
                                             try store.set(c, name: s.currentName ?? (s.current == nil ? Presets.cities[0].name : nil),
                                                           source: s.source == "off" ? "custom" : s.source)
                                         } else {
                                             try store.off()
                                         }
                                     })
        try host.addPluginValueEntry(.choice, id: "place", title: "Place", section: Location.section,
                                     summary: "A preset or a place added with loc.add",
                                     choices: Presets.all.map(\.id),
                                     read: {
                                         let store = try store.get()
                                         let s = store.snapshot
                                         let id = store.places().first { $0.coordinate == s.current }?.id ?? ""
                                         return (id, [("position", s.current.map { "\($0)" }), ("source", s.source)])
                                     },
                                     set: { id throws in
                                         let store = try store.get()
                                         guard let place = store.place(id) else { throw LocError.notFound("no place '\(id)'") }
                                         try store.set(place.coordinate, name: place.name, source: place.kind == .custom ? "custom" : "preset")
                                     })
        try host.addAction(id: "off", title: "Stop spoofing", command: "off", section: Location.section)
        try LocationCommands(store: store, routes: routes).register(with: host)
        try host.publishService(PINCER_LOCATION_SERVICE_ID, table: UnsafeRawPointer(service.table))
    }
}
