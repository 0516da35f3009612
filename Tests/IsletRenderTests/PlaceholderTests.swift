import Testing
@testable import IsletRender

/// Placeholder so the test target builds before its first real test lands; remove it then.
@Test func IsletRenderModuleLinks() { #expect(IsletRenderModule.self == IsletRenderModule.self) }
