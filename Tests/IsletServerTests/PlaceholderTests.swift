import Testing
@testable import IsletServer

/// Placeholder so the test target builds before its first real test lands; remove it then.
@Test func IsletServerModuleLinks() { #expect(IsletServerModule.self == IsletServerModule.self) }
