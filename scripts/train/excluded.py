"""What no training data may come from, for every trainer of scripts/train/:
the projects whose questions measure retrieval (dev and evaluation corpora,
bench/corpus.sh and bench/), the standard library and
vendored copies."""

# Python evaluation projects (top-level import names).
EXCLUDED_MODULES = {
    "flask", "werkzeug", "requests", "click", "jinja2", "pytest", "_pytest", "py",
    "django", "sympy", "sphinx", "pylint", "astroid", "xarray", "astropy",
    "matplotlib", "mpl_toolkits", "sklearn", "streamlink",
}
# The other languages' evaluation corpora, by the Debian or npm package they
# come from (bench/corpus.sh's LANG_CORPORA).
EXCLUDED_PACKAGES = {
    "golang-github-gin-gonic-gin-dev", "golang-github-spf13-cobra-dev", "librust-serde-json-dev",
    "librust-regex-dev", "lua5.4", "tree-sitter", "leveldb", "ninja-build", "jsoup", "junit4",
    "markdown-it", "linkify-it", "mdurl", "express", "body-parser", "send", "serve-static",
    "finalhandler", "path-to-regexp", "rxjs", "@tanstack/query-core", "linux-source-6.1",
    "python3-flask", "python3-werkzeug", "python3-requests", "python3-click", "python3-jinja2",
    "python3-pytest", "python3-django", "python3-sympy", "python3-sphinx", "pylint",
    "python3-xarray", "python3-astropy", "python3-matplotlib", "python3-sklearn",
    "python3-streamlink", "libpython3.11-minimal", "libpython3.11-stdlib",
}
EXCLUDED_DIRS = {"_vendor", "vendor", "vendored", "_vendored", "extern", "_extern"}
# and, for the other languages' trees
OTHER_VENDOR_DIRS = {"third_party", "thirdparty", "node_modules", "deps"}


def package_excluded(spec):
    """Why a package spec (name=version, name@version) may not be used, or None."""
    name = spec.split("=")[0]
    if "@" in name[1:]:
        name = name[:name.rindex("@")]
    if name in EXCLUDED_PACKAGES:
        return "evaluation corpus " + name
    return None


def path_excluded(rel):
    """Why a file (relative to its package's root) may not be used, or None."""
    parts = rel.split("/")
    if any(p in EXCLUDED_DIRS or p in OTHER_VENDOR_DIRS for p in parts[:-1]):
        return "vendored copy"
    top = parts[0].split(".")[0]
    if top.lower() in EXCLUDED_MODULES:
        return "evaluation project " + top
    return None
