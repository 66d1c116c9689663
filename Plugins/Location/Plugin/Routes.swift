import PincerPluginKit
import GeoRoutes

/// The built-in scenarios and the imported routes. The route store
/// (<state>/routes.sqlite) is opened by the first command that needs an
/// imported route, never in init, and a scenario never opens it.
struct Routes: Sendable {
    let store: FirstUse<RouteStore>

    init(host: PluginHost, settings: FirstUse<LocationStore>) {
        store = FirstUse { () throws -> RouteStore in
            guard let directory = host.stateDirectory else {
                throw LocError.storage("the host gives this plugin no state directory, so routes cannot be kept")
            }
            let opened: RouteStore
            do throws(RouteStoreError) {
                // The old GPX files' speeds are in the settings document: read only when there are files to migrate.
                opened = try RouteStore(directory: directory, legacySpeeds: { (try? settings.get())?.snapshot.routeSpeeds ?? [:] })
            } catch {
                throw LocError.storage("\(error)")
            }
            if let warning = opened.setAsideWarning { host.log(.warning, warning) }
            for note in opened.migrationNotes { host.log(note.hasPrefix("moved ") ? .info : .warning, note) }
            return opened
        }
    }

    private func opened() throws(LocError) -> RouteStore {
        do { return try store.get() } catch let error as LocError { throw error } catch { throw .storage("\(error)") }
    }

    /// The route with its points: a scenario, else an imported route (read
    /// from the store only then), else nil.
    func route(_ name: String) throws(LocError) -> Route? {
        if let scenario = Scenarios.named(name) { return scenario }
        let store = try opened()
        do throws(RouteStoreError) { return try store.route(name) } catch { throw .storage("\(error)") }
    }

    /// The route, or a not-found error that lists the names there are.
    func require(_ name: String) throws(LocError) -> Route {
        if let route = try route(name) { return route }
        let names = Scenarios.all.map(\.name) + ((try? summaries().map(\.name)) ?? [])
        throw .notFound("no route '\(name)' (routes: \(names.joined(separator: ", ")))")
    }

    /// Scenarios first, then imported routes by name; reads no points.
    func summaries() throws(LocError) -> [RouteSummary] {
        let store = try opened(), imported: [RouteSummary]
        do throws(RouteStoreError) { imported = try store.summaries() } catch { throw .storage("\(error)") }
        return Scenarios.all.map { RouteSummary($0, created: 0) }.sorted { $0.name < $1.name } + imported
    }

    /// Keeps `new` (names distinct) in one transaction; see RouteStore.save.
    /// `hint` follows the refusal when a name is kept already.
    @discardableResult
    func save(_ new: [Route], replace: Bool, hint: String) throws(LocError) -> [String] {
        for route in new where Scenarios.named(route.name) != nil {
            throw .invalid("'\(route.name)' is a built-in scenario; import under another --name")
        }
        let store = try opened()
        do throws(RouteStoreError) {
            return try store.save(new, replace: replace, now: LocationStore.wallClock())
        } catch {
            if case .exists(let names) = error {
                let list = names.map { "'\($0)'" }.joined(separator: ", ")
                throw .invalid("\(names.count == 1 ? "route \(list) exists" : "routes \(list) exist") already; nothing was saved. Give --replace to replace \(names.count == 1 ? "it" : "them")\(hint)")
            }
            throw .storage("could not keep the routes: \(error)")
        }
    }
}
