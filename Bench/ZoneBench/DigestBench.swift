enum DigestBench {
    static func run(json: Bool) {}
}
