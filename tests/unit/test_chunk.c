/*
 * test_chunk.c - the Python chunker (index/chunk/chunk.c): a table of small sources
 * with their exact chunks (modules, classes, compound statements, windows,
 * nesting, decorators, docstrings), and the line-coverage invariant over them
 * and every .py file under tests/fixtures. test_chunk_refs.c has the
 * references, test_chunk_text.c line endings, syntax errors, long units and
 * deep nesting.
 */
#include "chunk_util.h"

#include <dirent.h>
#include <sys/stat.h>

static const ChunkCase cases[] = {
    {"module",
     "#!/usr/bin/env python\n"
     "\"\"\"Module doc.\n"
     "\n"
     "More text.\"\"\"\n"
     "\n"
     "import os\n"
     "import sys as system\n"
     "\n"
     "MAX = 10\n"
     "NAMES = (\n"
     "    'a',  # first\n"
     "    'b',\n"
     ")\n"
     "\n"
     "\n"
     "def f():\n"
     "    return MAX\n"
     "\n"
     "print(f())\n",
     0, 0,
     (const ExpChunk[]){
         M(1, 13, "Module doc.\n\nMore text."),
         {IDX_KIND_FUNCTION, 16, 17, 0, "f", "def f():", NULL, -1},
         M(19, 19, NULL),
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 6, 0, "os", NULL, "os"),
         IMPORT(0, 7, 0, "sys", NULL, "system"),
         CALL(2, 19, "print"),
         CALL(2, 19, "f"),
         END_REFS,
     }},

    {"class",
     "import abc\n"                                             /* 1 */
     "\n"                                                       /* 2 */
     "\n"                                                       /* 3 */
     "@decorate\n"                                              /* 4 */
     "class Widget(base.Base, Mixin, metaclass=abc.ABCMeta):\n" /* 5 */
     "    \"\"\"A widget.\n"                                    /* 6 */
     "\n"                                                       /* 7 */
     "    Details.\"\"\"\n"                                     /* 8 */
     "\n"                                                       /* 9 */
     "    kind = \"w\"\n"                                       /* 10 */
     "    count = 0\n"                                          /* 11 */
     "\n"                                                       /* 12 */
     "    def __init__(self, name):\n"                          /* 13 */
     "        \"\"\"Make one.\"\"\"\n"                          /* 14 */
     "        self.name = name\n"                               /* 15 */
     "        self.setup()\n"                                   /* 16 */
     "\n"                                                       /* 17 */
     "    @property\n"                                          /* 18 */
     "    def label(self):\n"                                   /* 19 */
     "        return self.name.upper()\n"                       /* 20 */
     "\n"                                                       /* 21 */
     "    # a comment between\n"                                /* 22 */
     "\n"                                                       /* 23 */
     "    registry = {}\n"                                      /* 24 */
     "    other = make_other()\n"                               /* 25 */
     "\n"                                                       /* 26 */
     "    @app.route(\"/x\", methods=[\"GET\"])\n"              /* 27 */
     "    async def fetch(self):\n"                             /* 28 */
     "        data = await self.client.get()\n"                 /* 29 */
     "        return data\n"                                    /* 30 */
     "\n"                                                       /* 31 */
     "    class Meta:\n"                                        /* 32 */
     "        ordering = [\"name\"]\n"                          /* 33 */
     "\n"                                                       /* 34 */
     "        def meth(self):\n"                                /* 35 */
     "            pass\n"                                       /* 36 */
     "\n"                                                       /* 37 */
     "    # trailing comment\n"                                 /* 38 */
     "\n"                                                       /* 39 */
     "\n"                                                       /* 40 */
     "x = Widget(\"a\")\n",                                     /* 41 */
     0, 0,
     (const ExpChunk[]){
         M(1, 1, NULL),
         {IDX_KIND_CLASS, 4, 11, 0, "Widget",
          "class Widget(base.Base, Mixin, metaclass=abc.ABCMeta):", "A widget.\n\n    Details.",
          -1},
         {IDX_KIND_METHOD, 13, 16, 0, "Widget.__init__", "def __init__(self, name):", "Make one.",
          1},
         {IDX_KIND_METHOD, 18, 20, 0, "Widget.label", "def label(self):", NULL, 1},
         {IDX_KIND_CLASS, 22, 25, 0, "Widget",
          "class Widget(base.Base, Mixin, metaclass=abc.ABCMeta):", NULL, -1},
         {IDX_KIND_METHOD, 27, 30, 0, "Widget.fetch", "async def fetch(self):", NULL, 1},
         {IDX_KIND_CLASS, 32, 33, 0, "Widget.Meta", "class Meta:", NULL, 1},
         {IDX_KIND_METHOD, 35, 36, 0, "Widget.Meta.meth", "def meth(self):", NULL, 6},
         M(41, 41,
           NULL), /* the comment at class indentation stays with the class, alone: dropped */
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "abc", NULL, "abc"),
         VALUE(1, 4, "decorate"), /* a decorator is no call written here */
         INHERIT(1, 5, "base.Base"),
         INHERIT(1, 5, "Mixin"),
         CALL(2, 16, "self.setup"),
         VALUE(3, 18, "property"),
         CALL(3, 20, "self.name.upper"),
         CALL(4, 25, "make_other"),
         CALL(1, 27, "app.route"),           /* the decorator runs in the class's body */
         CALL(5, 29, "Widget().client.get"), /* client: typed elsewhere, maybe */
         CALL(5, 29, "__class__().client"),  /* a read that may be a property */
         CALL(8, 41, "Widget"),
         /* type facts for other files' calls (IDX_REF_TYPE_FACT) */
         TYPE(1, 5, "=other:make_other"),
         TYPE(3, 19, "=@:"),
         END_REFS,
     }},

    {"decorators run where the definition is written",
     "import x\n"           /* 1 */
     "\n"                   /* 2 */
     "@x.register(\"a\")\n" /* 3 */
     "def f():\n"           /* 4 */
     "    return g()\n"     /* 5 */
     "\n"                   /* 6 */
     "@plain\n"             /* 7 */
     "def h():\n"           /* 8 */
     "    @inner(1)\n"      /* 9 */
     "    def k():\n"       /* 10 */
     "        pass\n"       /* 11 */
     "    return k\n",      /* 12 */
     0, 0,
     (const ExpChunk[]){
         M(1, 1, NULL),
         {IDX_KIND_FUNCTION, 3, 5, 0, "f", "def f():", NULL, -1},
         {IDX_KIND_FUNCTION, 7, 12, 0, "h", "def h():", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "x", NULL, "x"),
         CALL(0, 3, "x.register"), /* the module's code calls it, not f */
         CALL(1, 5, "g"),
         VALUE(2, 7, "plain"),
         CALL(2, 9, "inner"), /* k's decorator runs in h */
         END_REFS,
     }},

    {"compound statements",
     "import sys\n"                  /* 1 */
     "\n"                            /* 2 */
     "if sys.platform == 'win32':\n" /* 3 */
     "    def f():\n"                /* 4 */
     "        return 1\n"            /* 5 */
     "else:\n"                       /* 6 */
     "    def f():\n"                /* 7 */
     "        return 2\n"            /* 8 */
     "\n"                            /* 9 */
     "try:\n"                        /* 10 */
     "    from fast import g\n"      /* 11 */
     "except ImportError:\n"         /* 12 */
     "    def g(x):\n"               /* 13 */
     "        return x\n"            /* 14 */
     "\n"                            /* 15 */
     "class K:\n"                    /* 16 */
     "    if DEBUG:\n"               /* 17 */
     "        def dbg(self):\n"      /* 18 */
     "            pass\n"            /* 19 */
     "    else:\n"                   /* 20 */
     "        dbg = None\n",         /* 21 */
     0, 0,
     (const ExpChunk[]){
         M(1, 3, NULL),
         {IDX_KIND_FUNCTION, 4, 5, 0, "f", "def f():", NULL, -1},
         M(6, 6, NULL),
         {IDX_KIND_FUNCTION, 7, 8, 0, "f", "def f():", NULL, -1},
         M(10, 12, NULL),
         {IDX_KIND_FUNCTION, 13, 14, 0, "g", "def g(x):", NULL, -1},
         {IDX_KIND_CLASS, 16, 17, 0, "K", "class K:", NULL, -1},
         {IDX_KIND_METHOD, 18, 19, 0, "K.dbg", "def dbg(self):", NULL, 6},
         {IDX_KIND_CLASS, 20, 21, 0, "K", "class K:", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "sys", NULL, "sys"),
         IMPORT(4, 11, 0, "fast", "g", "g"),
         RAISE(4, 12, "ImportError"),
         END_REFS,
     }},

    {"windows of 5 lines",
     "A = 1\n"                /* 1 */
     "B = 2\n"                /* 2 */
     "C = 3\n"                /* 3 */
     "D = 4\n"                /* 4 */
     "E = [\n"                /* 5 */
     "    1,\n"               /* 6 */
     "]\n"                    /* 7 */
     "F = 6\n"                /* 8 */
     "G = 7\n"                /* 9 */
     "H = 8\n"                /* 10 */
     "I = 9\n"                /* 11 */
     "J = 10\n"               /* 12 */
     "K = 11\n"               /* 13 */
     "\n"                     /* 14 */
     "def f(a):\n"            /* 15 */
     "    \"\"\"Doc.\"\"\"\n" /* 16 */
     "    x = g(\n"           /* 17 */
     "        a,\n"           /* 18 */
     "        a,\n"           /* 19 */
     "    )\n"                /* 20 */
     "    return x\n",        /* 21 */
     5, 0,
     (const ExpChunk[]){
         {IDX_KIND_MODULE, 1, 4, 1, "", "", NULL, -1},
         {IDX_KIND_MODULE, 5, 9, 2, "", "", NULL, -1},
         {IDX_KIND_MODULE, 10, 13, 3, "", "", NULL, -1},
         {IDX_KIND_FUNCTION, 15, 19, 1, "f", "def f(a):", "Doc.", -1},
         {IDX_KIND_FUNCTION, 20, 21, 2, "f", "def f(a):", "Doc.", -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         CALL(3, 17, "g"),
         END_REFS,
     }},

    {"nested definitions inside a function",
     "def outer():\n"
     "    def inner():\n"
     "        class Local:\n"
     "            def m(self):\n"
     "                pass\n"
     "        return Local\n"
     "    return inner\n",
     0, 0,
     (const ExpChunk[]){
         {IDX_KIND_FUNCTION, 1, 7, 0, "outer", "def outer():", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){END_REFS}},

    {"decorated async function",
     "@a\n"
     "@b.c(1)\n"
     "async def go(x: int = 1,  # the x\n"
     "             *args) -> \"R\":\n"
     "    '''Go.'''\n"
     "    await x\n",
     0, 0,
     (const ExpChunk[]){
         {IDX_KIND_FUNCTION, 1, 6, 0, "go", "async def go(x: int = 1, *args) -> \"R\":", "Go.", -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         VALUE(0, 1, "a"),
         CALL(0, 2, "b.c"),
         TYPE(0, 3, "=():R"),
         END_REFS,
     }},

    {"docstring forms",
     "def f():\n"                        /* 1 */
     "    r\"\"\"Raw \\d doc.\"\"\"\n"   /* 2 */
     "def g():\n"                        /* 3 */
     "    \"part one \" \"part two\"\n"  /* 4 */
     "def h():\n"                        /* 5 */
     "    (\"paren \"\n"                 /* 6 */
     "     \"doc\")\n"                   /* 7 */
     "def i():\n"                        /* 8 */
     "    x = \"not doc\"\n"             /* 9 */
     "class K:\n"                        /* 10 */
     "    b'''  Bytes doc\n'''\n"        /* 11-12 */
     "def j():\n"                        /* 13 */
     "    # comment first\n"             /* 14 */
     "    \"\"\"After comment.\"\"\"\n", /* 15 */
     0, 0,
     (const ExpChunk[]){
         {IDX_KIND_FUNCTION, 1, 2, 0, "f", "def f():", "Raw \\d doc.", -1},
         {IDX_KIND_FUNCTION, 3, 4, 0, "g", "def g():", "part one part two", -1},
         {IDX_KIND_FUNCTION, 5, 7, 0, "h", "def h():", "paren doc", -1},
         {IDX_KIND_FUNCTION, 8, 9, 0, "i", "def i():", NULL, -1},
         {IDX_KIND_CLASS, 10, 12, 0, "K", "class K:", "Bytes doc", -1},
         {IDX_KIND_FUNCTION, 13, 15, 0, "j", "def j():", "After comment.", -1},
         END_CHUNKS,
     },
     (const ExpRef[]){END_REFS}},
};

static void test_table(void)
{
    run_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_case_invariants(void)
{
    cases_invariants(cases, sizeof cases / sizeof cases[0]);
}

/* ---------------------------------------------------------------- fixtures */

static void check_tree(Chunker *ck, const char *dir, int *n_files)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    if (!d) return;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        StrBuf path;
        sb_init(&path);
        sb_addf(&path, "%s/%s", dir, de->d_name);
        struct stat st;
        /* lstat: scanner fixtures may hold symlink loops */
        int ok = lstat(path.buf, &st) == 0;
        if (ok && S_ISDIR(st.st_mode)) {
            check_tree(ck, path.buf, n_files);
        } else if (ok && S_ISREG(st.st_mode) && path.len > 3 &&
                   !strcmp(path.buf + path.len - 3, ".py")) {
            StrBuf src;
            sb_init(&src);
            CHECK_INT(sb_read_file(&src, path.buf, 0, NULL), CR_OK);
            static const uint32_t maxes[] = {0, 7};
            for (size_t i = 0; i < 2; i++) {
                ChunkSet s = {0};
                CHECK_INT(idx_chunker_run_lang(ck, idx_lang_by_name("python"), src.buf, src.len,
                                               maxes[i], &s, NULL),
                          CR_OK);
                check_invariants(path.buf, src.buf, src.len, maxes[i], &s);
                idx_chunk_set_release(&s);
            }
            (*n_files)++;
            sb_release(&src);
        }
        sb_release(&path);
    }
    closedir(d);
}

static void test_fixture_invariants(void)
{
    Chunker *ck = idx_chunker_new();
    int n = 0;
    check_tree(ck, FIXTURE_DIR, &n);
    CHECK(n >= 3); /* at least tests/fixtures/chunk/ */
    idx_chunker_free(ck);
}

int main(void)
{
    RUN(test_table);
    RUN(test_case_invariants);
    RUN(test_fixture_invariants);
    return test_summary();
}
