/* c.c - C and C++: #include "..." resolved beside the includer, then in the
 * workspace's include folders; a header holding C++ is read as C++. */
#include "c_int.h"

#include <stdlib.h>
#include <string.h>

extern const char idx_query_c[], idx_query_cpp[];
const TSLanguage *tree_sitter_c(void);
const TSLanguage *tree_sitter_cpp(void);
extern const IdxLang idx_lang_cpp;

/* An include in angle brackets: its spec starts with this mark, so the
 * resolution skips the includer's own folder (what the brackets mean). */
#define C_ANGLE '<'

static void c__import(LangParse *p, TSNode node)
{
    TSNode path = ts_node_child_by_field_name(node, "path", 4);
    if (ts_node_is_null(path)) return;
    int angle = !strcmp(ts_node_type(path), "system_lib_string");
    if (!angle && strcmp(ts_node_type(path), "string_literal") != 0) return;
    char *spec = idx_lang_string_text(p, path);
    if (angle) {
        char *marked = xmalloc(strlen(spec) + 2);
        marked[0] = C_ANGLE;
        strcpy(marked + 1, spec);
        free(spec);
        spec = marked;
    }
    idx_lang_add_import(p, node, spec, "*", "*");
    free(spec);
}

/* The include's own folder first (what the quotes mean; not for angle
 * brackets), then folders a build would pass with -I: the root, include/,
 * src/, lib/, and the include/ folder of each folder above the includer
 * (the kernel's <linux/mutex.h> is include/linux/mutex.h; arch/NAME/include
 * only from under arch/NAME: the row knows no built architecture). */
static int c__resolve(const LangImportCtx *ctx, ChunkRef *r)
{
    static const char *const dirs[] = {NULL, "", "include", "src", "lib"};
    int angle = r->module[0] == C_ANGLE;
    const char *spec = r->module + angle;
    if (!spec[0]) return 0;
    char *found = NULL;
    for (size_t i = angle; i < sizeof dirs / sizeof dirs[0] && !found; i++) {
        char *dir = dirs[i] ? xstrdup(dirs[i]) : idx_lang_dirname(ctx->path);
        char *cand = idx_lang_join(dir, spec);
        if (cand && idx_lang_file_exists(ctx->root, cand))
            found = cand;
        else
            free(cand);
        free(dir);
    }
    /* then the include/ folder of each folder above the includer, nearest
     * first (a subtree's own headers: src/include, arch/x86/include) */
    char *dir = found ? NULL : idx_lang_dirname(ctx->path);
    while (dir && dir[0] && !found) {
        char *up = idx_lang_dirname(dir), *inc = idx_lang_join(up, "include");
        char *cand = inc ? idx_lang_join(inc, spec) : NULL;
        if (cand && idx_lang_file_exists(ctx->root, cand))
            found = cand;
        else
            free(cand);
        free(inc);
        free(dir);
        dir = up;
    }
    free(dir);
    if (!found) return 0;
    free(r->module);
    r->module = idx_lang_module_keep_ext(found);
    free(found);
    return 1;
}

/* Whether word starts a line of src (after its indentation): a comment's
 * lines start with its own marks, so prose ("the class of…") is not code. */
static int c__has(const char *src, size_t len, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = src; (p = memmem(p, len - (size_t)(p - src), word, n)) != NULL; p += n) {
        const char *b = p;
        while (b > src && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (b == src || b[-1] == '\n') return 1;
    }
    return 0;
}

static const IdxLang *c__refine(const char *src, size_t len)
{
    static const char *const cxx[] = {"class ",  "namespace ", "template <", "template<",
                                      "public:", "private:",   "std::"};
    for (size_t i = 0; i < sizeof cxx / sizeof cxx[0]; i++)
        if (c__has(src, len, cxx[i])) return &idx_lang_cpp;
    return NULL;
}

static const char *const c__exts[] = {".c", ".h", NULL};
static const char *const c__follow[] = {".h", NULL}; /* C++ projects' headers too */
static const char *const cpp__exts[] = {".cc", ".cpp", ".cxx", ".c++", ".hpp",
                                        ".hh", ".hxx", ".ipp", ".inl", NULL};
/* top-level only (a CMakeLists.txt or Makefile sits in every folder of a
 * project, so the nearest one would be a subfolder) */
static const char *const c__markers[] = {"configure.ac", "compile_commands.json", ".clangd", NULL};
static const char *const c__tests[] = {"test/",      "tests/",     "testing/", "_test.",
                                       "_unittest.", "_perftest.", "_bench.",  NULL};
static const char *const c__comments[] = {"comment", NULL};
static const char *const cpp__wrappers[] = {"template_declaration", NULL};

static const char *const c__keywords[] = {
    "break",  "case",    "char",   "const",    "continue", "default",  "do",     "double",
    "else",   "enum",    "extern", "float",    "for",      "goto",     "if",     "int",
    "long",   "null",    "return", "short",    "signed",   "sizeof",   "static", "struct",
    "switch", "typedef", "union",  "unsigned", "void",     "volatile", "while",  NULL};

/* GCC's on x86-64 Linux (`gcc -dM -E - </dev/null`), those #if tests use:
 * the same for C and C++ but for the language's version and g++'s own
 * (exceptions and RTTI on, as by default). */
#define GCC_LINUX_HEAD                                                                             \
    "__linux__", "__linux", "linux", "__unix__", "__unix", "unix", "__gnu_linux__", "__ELF__",     \
        "__GNUC__=12", "__GNUC_MINOR__=2", "__STDC__=1"
#define GCC_X86_64_TAIL                                                                            \
    "__STDC_HOSTED__=1", "__x86_64__", "__x86_64", "__amd64__", "__LP64__", "_LP64",               \
        "__CHAR_BIT__=8", "__SIZEOF_INT__=4", "__SIZEOF_LONG__=8", "__SIZEOF_POINTER__=8",         \
        "__SIZEOF_LONG_LONG__=8", "__ORDER_LITTLE_ENDIAN__=1234", "__ORDER_BIG_ENDIAN__=4321",     \
        "__BYTE_ORDER__=1234"
static const char *const c__predefined[] = {GCC_LINUX_HEAD, "__STDC_VERSION__=201710L",
                                            GCC_X86_64_TAIL, NULL};
static const char *const cpp__predefined[] = {
    GCC_LINUX_HEAD,       "__cplusplus=201703L", "__GNUG__=12",
    "__EXCEPTIONS=1",     "__GXX_RTTI=1",        "__cpp_exceptions=199711L",
    "__cpp_rtti=199711L", GCC_X86_64_TAIL,       NULL};

const IdxLang idx_lang_c = {
    .helper_lines = 12,
    .graph_limits =
        "calls through function pointers (a parameter, a callback) except where the pointer's "
        "value is known, calls through a field that tables store more than 6 functions in "
        "(but the one most of them share; a field's functions are matched by its name, not its "
        "struct), code of #if branches the configuration leaves out",
    .predefined = c__predefined,
    .keywords = c__keywords,
    .name = "c",
    .exts = c__exts,
    .fence = "c",
    .markers = c__markers,
    .grammar = tree_sitter_c,
    .query = idx_query_c,
    .comments = c__comments,
    .tests = c__tests,
    .module_name = idx_lang_module_keep_ext,
    .import = c__import,
    .resolve_import = c__resolve,
    .follow_exts = c__follow,
    .refine = c__refine,
    .mask = idx_c_mask,
    .field_calls = 1,
    .no_module_calls = 1,
    .links_by_includes = 1,
};

static const char *const cpp__builtin_methods[] = {
    "push_back", "emplace_back", "pop_back", "size",  "empty",  "begin",  "end",
    "find",      "insert",       "erase",    "clear", "at",     "front",  "back",
    "reserve",   "resize",       "c_str",    "data",  "substr", "append", "count",
    "get",       "reset",        "swap",     "first", "second", NULL,
};

static const char *const cpp__self[] = {"this", NULL};
static const char *const cpp__keywords[] = {
    "auto",     "bool",     "break",   "case",      "char",   "class",  "const",
    "continue", "default",  "delete",  "do",        "double", "else",   "enum",
    "false",    "float",    "for",     "if",        "int",    "long",   "namespace",
    "new",      "nullptr",  "private", "protected", "public", "return", "short",
    "static",   "struct",   "switch",  "template",  "this",   "true",   "typedef",
    "typename", "unsigned", "using",   "virtual",   "void",   "while",  NULL};

static const char *const cpp__forwarded[] = {"va_list", NULL};
/* the standard library's namespace: `std::string(s)`, `std::move(x)` are
 * never a workspace method or function found by the name alone */
static const char *const cpp__builtin_objects[] = {"std", NULL};

static const char *const cpp__scalars[] = {
    "bool",     "char",      "wchar_t",    "char8_t",     "char16_t", "char32_t",
    "short",    "int",       "long",       "unsigned",    "signed",   "float",
    "double",   "size_t",    "ssize_t",    "ptrdiff_t",   "int8_t",   "int16_t",
    "int32_t",  "int64_t",   "uint8_t",    "uint16_t",    "uint32_t", "uint64_t",
    "intptr_t", "uintptr_t", "__int128_t", "__uint128_t", NULL};
static const char *const cpp__qualifiers[] = {"const", "volatile", "struct",   "class",
                                              "enum",  "typename", "register", NULL};
static const char *const cpp__string_classes[] = {"string",       "char*",    "string_view",
                                                  "char*",        "wstring",  "wchar_t*",
                                                  "wstring_view", "wchar_t*", NULL};
static const char *const cpp__literals[] = {
    "string_literal", "char*", "raw_string_literal", "char*", "concatenated_string", "char*",
    "char_literal", "char", "number_literal", "int", "true", "bool", "false", "bool", "null", "*",
    "this", "@", "identifier", "=", "pointer_expression", "&",
    /* `Path p(name);`, read as a function's declaration: its "parameters" */
    "parameter_declaration", "=", NULL};
static const char *const cpp__string_prefixes[] = {
    "L", "wchar_t", "u8", "char8_t", "u", "char16_t", "U", "char32_t", NULL};

const IdxLang idx_lang_cpp = {
    .out_of_line_members = 1,
    .overloads = 1,
    .forwarded_types = cpp__forwarded,
    .scalar_types = cpp__scalars,
    .type_qualifiers = cpp__qualifiers,
    .string_classes = cpp__string_classes,
    .literal_types = cpp__literals,
    .string_prefixes = cpp__string_prefixes,
    .builtin_objects = cpp__builtin_objects,
    .macro_declares = 1,
    .constructor_calls = 1,
    .call_chains = 1,
    .graph_limits =
        "virtual calls reaching overrides, calls on a receiver whose type is not known statically "
        "(auto, template parameters: linked only when a single definition anywhere has that name), "
        "operators on an expression or a receiver of unknown type, implicit conversions and "
        "destructors, calls through function pointers",
    .predefined = cpp__predefined,
    .keywords = cpp__keywords,
    .self_words = cpp__self,
    .name = "cpp",
    .exts = cpp__exts,
    .fence = "cpp",
    .markers = c__markers,
    .grammar = tree_sitter_cpp,
    .query = idx_query_cpp,
    .comments = c__comments,
    .tests = c__tests,
    .wrappers = cpp__wrappers,
    .module_name = idx_lang_module_keep_ext,
    .import = c__import,
    .resolve_import = c__resolve,
    .implicit_this = 1,
    .inherited_members = 1,
    .mask = idx_cpp_mask,
    .builtin_methods = cpp__builtin_methods,
};
