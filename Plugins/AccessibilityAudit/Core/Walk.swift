#if canImport(Glibc)
import Glibc
#endif

/// Why an element cannot be seen. One rule answers "can this be seen?" for
/// every check: `Walk.visibility`.
public enum Invisibility: String, Sendable {
    case hidden = "hidden"
    case transparent = "fully transparent"
    case clipped = "clipped away by an ancestor"
    case offScreen = "off screen"
    case covered = "covered by an opaque element drawn over it"
    case outsideModal = "outside the modal view"
}

/// The limits of one pass. Any limit stops the rest of the walk, in tree
/// order; the report says what was not checked.
public struct AuditLimits: Sendable, Equatable {
    public var maximumDepth = 100
    public var maximumNodes = 5000
    /// Seconds of wall time for the whole pass.
    public var timeBudget = 2.0

    public init(maximumDepth: Int = 100, maximumNodes: Int = 5000, timeBudget: Double = 2.0) {
        self.maximumDepth = maximumDepth
        self.maximumNodes = maximumNodes
        self.timeBudget = timeBudget
    }
}

/// The element tree flattened in tree (drawing) order, with what every check
/// needs precomputed: depth, parent, the part of the frame ancestors leave
/// visible, effective alpha, and the hidden / accessibility-hidden / modal
/// state inherited from ancestors.
public struct Walk: Sendable {
    public struct Node: Sendable {
        public let element: Element
        public let depth: Int
        public let parent: Int?
        /// One past the last descendant's index: descendants are (index+1)..<end.
        public internal(set) var end: Int
        /// The frame cut by every clipping ancestor and the screen.
        public let visibleRect: Rect
        public let alpha: Double
        public let hidden: Bool
        /// Hidden from assistive technology by an ancestor (or itself).
        public let accessibilityHidden: Bool
        /// Clipped by an ancestor (not by the screen edge).
        public let clippedByAncestor: Bool
        public let onScreenEdge: Bool
        /// The nearest background colour at or above this element.
        public let inheritedBackground: Color?
    }

    public let screen: Screen
    public private(set) var nodes: [Node] = []
    /// Elements in the whole tree, walked or not.
    public let totalElements: Int
    /// Why the walk stopped early, when it did, and where.
    public private(set) var stoppedBy: String?
    /// The first element not walked (its source path), when the walk stopped.
    public private(set) var stoppedAt: String?
    /// Index of the topmost modal element walked, if any.
    public private(set) var modal: Int?
    let deadline: Double

    public init(screen: Screen, limits: AuditLimits) {
        self.screen = screen
        totalElements = Walk.count(screen.root)
        deadline = Walk.now() + limits.timeBudget
        nodes.reserveCapacity(min(totalElements, limits.maximumNodes))
        var stack: [(element: Element, depth: Int, parent: Int?, clip: Rect, alpha: Double, hidden: Bool, axHidden: Bool,
                     background: Color?)] = [(screen.root, 0, nil, Walk.unbounded, 1, false, false, nil)]
        while let item = stack.popLast() {
            let e = item.element
            if item.depth >= limits.maximumDepth {
                stop("the depth limit (\(limits.maximumDepth) levels)", at: e)
                break
            }
            if nodes.count >= limits.maximumNodes {
                stop("the node limit (\(limits.maximumNodes) elements)", at: e)
                break
            }
            if nodes.count % 64 == 0, Walk.now() > deadline {
                stop("the time budget (\(Format.number(limits.timeBudget * 1000)) ms)", at: e)
                break
            }
            // `clip` is what clipping ancestors leave; the screen cuts too.
            let visible = e.frame.intersection(item.clip).intersection(screen.size)
            let onEdge = e.frame.x < screen.size.x + 0.5 || e.frame.y < screen.size.y + 0.5
                || e.frame.maxX > screen.size.maxX - 0.5 || e.frame.maxY > screen.size.maxY - 0.5
            let clippedHere = !item.clip.contains(e.frame)
            let background = e.background.flatMap { $0.alpha > 0 ? $0 : nil }.map { c -> Color in
                c.alpha >= 1 ? c : c.composited(over: item.background ?? Color(red: 1, green: 1, blue: 1))
            } ?? item.background
            let index = nodes.count
            nodes.append(Node(element: e, depth: item.depth, parent: item.parent, end: index + 1, visibleRect: visible,
                              alpha: item.alpha * e.alpha, hidden: item.hidden || e.isHidden,
                              accessibilityHidden: item.axHidden || e.accessibilityElementsHidden,
                              clippedByAncestor: clippedHere, onScreenEdge: onEdge, inheritedBackground: background))
            if e.isModal, !(item.hidden || e.isHidden) { modal = index }
            let childClip = e.clipsToBounds ? item.clip.intersection(e.frame) : item.clip
            for child in e.children.reversed() {
                stack.append((child, item.depth + 1, index, childClip, item.alpha * e.alpha, item.hidden || e.isHidden,
                              item.axHidden || e.accessibilityElementsHidden, background))
            }
        }
        // Subtree ends, from the parents.
        for i in stride(from: nodes.count - 1, through: 0, by: -1) {
            if let p = nodes[i].parent { nodes[p].end = max(nodes[p].end, nodes[i].end) }
        }
        opaque = nodes.indices.filter { nodes[$0].element.isOpaque && !nodes[$0].hidden && nodes[$0].alpha >= 1 }
    }

    /// Opaque, shown elements: what can cover others.
    private var opaque: [Int] = []

    private mutating func stop(_ reason: String, at element: Element) {
        stoppedBy = reason
        stoppedAt = element.source ?? element.displayName
    }

    /// Elements left unchecked because the walk stopped.
    public var elementsNotWalked: Int { totalElements - nodes.count }
    public var isComplete: Bool { stoppedBy == nil }

    /// Whether the time budget is spent (checks stop then too).
    public var isOutOfTime: Bool { Walk.now() > deadline }

    /// Can node `i` be seen? nil when it can, else why not.
    public func visibility(_ i: Int) -> Invisibility? {
        let node = nodes[i]
        if node.hidden { return .hidden }
        if node.alpha <= 0.01 { return .transparent }
        if node.element.frame.intersection(screen.size).isEmpty { return .offScreen }
        if node.visibleRect.isEmpty { return .clipped }
        if let modal, !(i >= modal && i < nodes[modal].end), !isAncestor(i, of: modal) { return .outsideModal }
        if isCovered(i) { return .covered }
        return nil
    }

    /// Whether a screen reader can land on node `i`: seen, and not hidden
    /// from assistive technology.
    public func isReachable(_ i: Int) -> Bool {
        visibility(i) == nil && !nodes[i].accessibilityHidden
    }

    func isAncestor(_ a: Int, of b: Int) -> Bool { a < b && b < nodes[a].end }

    /// Covered: an opaque element drawn later (not an ancestor or
    /// descendant) holds the whole visible part.
    func isCovered(_ i: Int) -> Bool {
        let rect = nodes[i].visibleRect
        for j in opaque where j > i && !isAncestor(i, of: j) {
            if nodes[j].visibleRect.contains(rect) { return true }
        }
        return false
    }

    static let unbounded = Rect(x: -1e12, y: -1e12, width: 2e12, height: 2e12)

    static func count(_ root: Element) -> Int {
        var total = 0
        var stack = [root]
        while let e = stack.popLast() {
            total += 1
            stack.append(contentsOf: e.children)
        }
        return total
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
