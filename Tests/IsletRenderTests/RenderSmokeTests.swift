import IsletCore
import IsletRender
import Testing

@Suite struct RenderSmokeTests {
    @Test("the Mustache renderer builds")
    func builds() {
        #expect(!MustacheRenderer.builtInAttributesTypes.isEmpty)
    }
}
