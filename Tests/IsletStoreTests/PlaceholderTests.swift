import Testing
@testable import IsletStore

/// Placeholder so the test target builds before its first real test lands; remove it then.
@Test func IsletStoreModuleLinks() { #expect(IsletStoreModule.self == IsletStoreModule.self) }
