/// Two APNs-style provider keys (P-256, made once with `openssl genpkey`), for tests that need
/// a fixed key without running `openssl`. Test material only: never used by a server.
public enum ProviderKeyFixtures {
    public static let keyID = "ABC123DEFG"
    public static let teamID = "DEF123GHIJ"
    public static let otherKeyID = "XYZ987WXYZ"

    /// A private key in the form of Apple's `AuthKey_<key id>.p8` (PKCS#8).
    public static let privateKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgxjgYXM2A1vNT5q0E
        2eU//Cb/hUbVMPecIW70r03sO/uhRANCAAQK+63dQbfM7zYTV8lKuBnQam5pntpR
        ugiJCLIAsEgZdN6mV8+rco48zGde4336nY27FzaG+gXSI2RTLnZAxuUK
        -----END PRIVATE KEY-----

        """

    /// The public half of ``privateKey`` (SubjectPublicKeyInfo), as `openssl pkey -pubout` prints it.
    public static let publicKey = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAECvut3UG3zO82E1fJSrgZ0GpuaZ7a
        UboIiQiyALBIGXTeplfPq3KOPMxnXuN9+p2Nuxc2hvoF0iNkUy52QMblCg==
        -----END PUBLIC KEY-----

        """

    /// Another key, for tokens a registered key did not sign.
    public static let otherPrivateKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgdyj6kCD8oORwqo8c
        3FEdQi+0RsLDGwLKcIGXHoM+IZuhRANCAASSiLj9fkI+rN06lOyB9y8S5r7sEON8
        79IT3cH9jccpfzdeiiN8kUxRSGNdF4W0SWVZtvvtooXIEwcPM3NLz4XZ
        -----END PRIVATE KEY-----

        """

    /// The public half of ``otherPrivateKey``.
    public static let otherPublicKey = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEkoi4/X5CPqzdOpTsgfcvEua+7BDj
        fO/SE93B/Y3HKX83XoojfJFMUUhjXReFtEllWbb77aKFyBMHDzNzS8+F2Q==
        -----END PUBLIC KEY-----

        """
}
