import Testing
@testable import IsletTransport

/// Placeholder so the test target builds before its first real test lands; remove it then.
@Test func IsletTransportModuleLinks() { #expect(IsletTransportModule.self == IsletTransportModule.self) }
