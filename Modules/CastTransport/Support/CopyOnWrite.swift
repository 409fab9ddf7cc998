/// A value behind one shared reference, copied only when it is written while another copy shares it.
///
/// For the package's large value types that travel a lot (a media status, its media, the cast options): a copy
/// of the owner is a retain instead of a copy and retain of every field, and the owner is one word.
package struct CopyOnWrite<Value: Sendable>: Sendable {
    @usableFromInline
    final class Box: @unchecked Sendable {
        // @unchecked: `value` is written only through `CopyOnWrite.value`'s modify accessor, on a box no other
        // copy shares.
        @usableFromInline var value: Value

        @inlinable init(_ value: Value) { self.value = value }
    }

    @usableFromInline var box: Box

    /// Wraps `value`.
    @inlinable
    package init(_ value: Value) { box = Box(value) }

    /// The value; reading a part of it reads that part in place, and writing it first copies it when another copy
    /// shares it.
    @inlinable
    package var value: Value {
        _read { yield box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }
}

extension CopyOnWrite: Equatable where Value: Equatable {
    /// Copies of one value are equal without comparing it.
    @inlinable
    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.box === rhs.box || lhs.box.value == rhs.box.value }
}

extension CopyOnWrite: Hashable where Value: Hashable {
    @inlinable
    package func hash(into hasher: inout Hasher) { box.value.hash(into: &hasher) }
}
