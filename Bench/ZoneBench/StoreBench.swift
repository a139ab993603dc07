enum StoreBench {
    static func run(json: Bool) async {}
}
