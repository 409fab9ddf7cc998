import NIOPosix

extension ThreadSpecificVariable {
    /// This thread's value, made by `make` on the thread's first use: for state each event loop's thread keeps for
    /// all of its connections.
    func current(orMake make: () -> Value) -> Value {
        if let value = currentValue { return value }
        let value = make()
        currentValue = value
        return value
    }
}
