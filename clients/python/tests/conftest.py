import os

pytest_plugins = ["pytester"]

# pytester runs tests in a temporary directory: a relative $ISLET_BIN would not be found there.
if binary := os.environ.get("ISLET_BIN"):
    os.environ["ISLET_BIN"] = os.path.abspath(binary)
