import Testing
@testable import IsletCore

/// Placeholder so the test target builds before its first real test lands; remove it then.
@Test func IsletCoreModuleLinks() { #expect(IsletCoreModule.self == IsletCoreModule.self) }
