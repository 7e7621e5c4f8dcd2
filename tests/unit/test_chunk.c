/*
 * test_chunk.c - the Python chunker (index/chunk.c): a table of small sources
 * with their exact chunks and references; windows of long units; CRLF, form
 * feeds and lone CRs; syntax errors; deep nesting; and the line-coverage
 * invariant over every source here and every .py file under tests/fixtures.
 */
#include "index/idx_int.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

typedef struct ExpChunk {
    IdxKind kind;
    uint32_t start, end, window;
    const char *symbol;
    const char *signature;
    const char *doc; /* prefix of the docstring; NULL: none */
    int parent;
} ExpChunk;

typedef struct ExpRef {
    RefKind kind;
    int chunk;
    uint32_t line; /* 0 ends a list */
    const char *name;
    int level;
    const char *module, *member, *alias;
} ExpRef;

typedef struct ChunkCase {
    const char *name;
    const char *src;
    uint32_t max_lines;
    int had_errors;
    const ExpChunk *chunks; /* ends with start == 0 */
    const ExpRef *refs;     /* ends with line == 0 */
} ChunkCase;

/* clang-format off */
#define M(s, e, doc) {IDX_KIND_MODULE, s, e, 0, "", "", doc, -1}
#define END_CHUNKS {IDX_KIND_MODULE, 0, 0, 0, NULL, NULL, NULL, -1}
#define CALL(c, l, n) {REF_CALL, c, l, n, 0, NULL, NULL, NULL}
#define INHERIT(c, l, n) {REF_INHERIT, c, l, n, 0, NULL, NULL, NULL}
#define RAISE(c, l, n) {REF_RAISE, c, l, n, 0, NULL, NULL, NULL}
#define IMPORT(c, l, lvl, mod, mem, al) {REF_IMPORT, c, l, NULL, lvl, mod, mem, al}
#define END_REFS {REF_CALL, 0, 0, NULL, 0, NULL, NULL, NULL}
/* clang-format on */

/* ---------------------------------------------------------------- invariants */

static int line_is_code(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v'))
        p++;
    return p < end && *p != '#';
}

static int streq0(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

/* What every chunk set must satisfy: ranges inside the file, line order,
 * windows no longer than max_lines and adjacent, valid parents, no line in
 * two chunks, every code line in exactly one, references inside their chunk. */
static void check_invariants(const char *what, const char *src, size_t len, uint32_t max_lines,
                             const ChunkSet *s)
{
    int before = test_state_.failed_checks;
    uint32_t max = max_lines ? max_lines : 100;
    size_t n = count_lines(src, len);
    int *cov = calloc(n + 2, sizeof *cov);
    for (size_t i = 0; i < s->n_chunks; i++) {
        const ChunkDef *d = &s->chunks[i];
        CHECK(d->start_line >= 1 && d->start_line <= d->end_line && d->end_line <= n);
        if (!(d->start_line >= 1 && d->start_line <= d->end_line && d->end_line <= n)) continue;
        CHECK(d->end_line - d->start_line + 1 <= max);
        if (i > 0) CHECK(s->chunks[i - 1].end_line < d->start_line);
        if (d->window > 1) {
            CHECK(i > 0 && s->chunks[i - 1].window == d->window - 1 &&
                  s->chunks[i - 1].end_line + 1 == d->start_line &&
                  streq0(s->chunks[i - 1].symbol, d->symbol));
        }
        if (d->parent >= 0) {
            CHECK((size_t)d->parent < i && s->chunks[d->parent].kind == IDX_KIND_CLASS &&
                  s->chunks[d->parent].window <= 1);
        }
        CHECK(d->symbol && d->name && d->signature);
        if (d->kind == IDX_KIND_MODULE) {
            CHECK(d->symbol && !*d->symbol && d->name && !*d->name && d->signature &&
                  !*d->signature);
            CHECK_INT(d->parent, -1);
        } else if (d->symbol && d->name) {
            const char *dot = strrchr(d->symbol, '.');
            CHECK_STR(d->name, dot ? dot + 1 : d->symbol);
            CHECK(*d->name && *d->signature);
        }
        for (uint32_t l = d->start_line; l <= d->end_line; l++)
            cov[l]++;
    }
    const char *p = src, *end = src + len;
    for (size_t l = 1; l <= n; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (cov[l] > 1 || (line_is_code(p, le) && cov[l] != 1)) {
            CHECK(cov[l] <= 1);
            CHECK(!line_is_code(p, le) || cov[l] == 1);
            fprintf(stderr, "  line %zu covered %d times\n", l, cov[l]);
            break;
        }
        p = nl ? nl + 1 : end;
    }
    for (size_t i = 0; i < s->n_refs; i++) {
        const ChunkRef *r = &s->refs[i];
        CHECK(r->chunk >= 0 && (size_t)r->chunk < s->n_chunks);
        if (r->chunk < 0 || (size_t)r->chunk >= s->n_chunks) continue;
        const ChunkDef *d = &s->chunks[r->chunk];
        if (r->kind == REF_INHERIT)
            CHECK(d->kind == IDX_KIND_CLASS || d->kind == IDX_KIND_FUNCTION ||
                  d->kind == IDX_KIND_METHOD || d->kind == IDX_KIND_MODULE);
        else
            CHECK(r->line >= d->start_line && r->line <= d->end_line);
        if (r->kind == REF_IMPORT)
            CHECK(r->module && r->alias && *r->alias && !r->name);
        else
            CHECK(r->name && *r->name && !r->module && !r->member && !r->alias);
    }
    free(cov);
    if (test_state_.failed_checks != before) fprintf(stderr, "  invariants of %s\n", what);
}

/* ---------------------------------------------------------------- table */

static void dump_set(const ChunkSet *s)
{
    static const char *const rk[] = {"IMPORT", "CALL", "INHERIT", "RAISE"};
    for (size_t i = 0; i < s->n_chunks; i++) {
        const ChunkDef *d = &s->chunks[i];
        fprintf(stderr, "  [%zu] %s %u-%u w%u \"%s\" \"%s\" doc=%s parent=%d\n", i,
                idx_kind_name(d->kind), d->start_line, d->end_line, d->window, d->symbol,
                d->signature, d->docstring ? d->docstring : "(null)", d->parent);
    }
    for (size_t i = 0; i < s->n_refs; i++) {
        const ChunkRef *r = &s->refs[i];
        fprintf(stderr, "  ref %s chunk=%d line=%u name=%s level=%d module=%s member=%s alias=%s\n",
                rk[r->kind], r->chunk, r->line, r->name ? r->name : "-", r->level,
                r->module ? r->module : "-", r->member ? r->member : "-",
                r->alias ? r->alias : "-");
    }
}

static int ref_matches(const ChunkRef *a, const ExpRef *x)
{
    if ((int)a->kind != (int)x->kind || a->chunk != x->chunk || a->line != x->line) return 0;
    if (x->kind == REF_IMPORT)
        return a->level == x->level && streq0(a->module, x->module) &&
               streq0(a->member, x->member) && streq0(a->alias, x->alias);
    return streq0(a->name, x->name);
}

static void check_set(const char *name, const char *src, size_t len, uint32_t max_lines,
                      const ChunkSet *s, const ExpChunk *xc, const ExpRef *xr)
{
    int before = test_state_.failed_checks;
    size_t nx = 0, nr = 0;
    while (xc[nx].start)
        nx++;
    while (xr[nr].line)
        nr++;
    check_invariants(name, src, len, max_lines, s);
    CHECK_INT(s->n_chunks, nx);
    for (size_t i = 0; i < nx && i < s->n_chunks; i++) {
        const ChunkDef *d = &s->chunks[i];
        const ExpChunk *x = &xc[i];
        CHECK_INT(d->kind, x->kind);
        CHECK_INT(d->start_line, x->start);
        CHECK_INT(d->end_line, x->end);
        CHECK_INT(d->window, x->window);
        CHECK_STR(d->symbol, x->symbol);
        CHECK_STR(d->signature, x->signature);
        CHECK_INT(d->parent, x->parent);
        if (x->doc)
            CHECK(d->docstring && !strncmp(d->docstring, x->doc, strlen(x->doc)));
        else
            CHECK(d->docstring == NULL);
    }
    CHECK_INT(s->n_refs, nr);
    char *used = calloc(s->n_refs + 1, 1);
    for (size_t j = 0; j < nr; j++) {
        size_t i;
        for (i = 0; i < s->n_refs; i++)
            if (!used[i] && ref_matches(&s->refs[i], &xr[j])) break;
        CHECK(i < s->n_refs);
        if (i < s->n_refs)
            used[i] = 1;
        else
            fprintf(stderr, "  missing ref #%zu (line %u, %s)\n", j, xr[j].line,
                    xr[j].name ? xr[j].name : xr[j].module);
    }
    free(used);
    if (test_state_.failed_checks != before) {
        fprintf(stderr, "  in case %s; got:\n", name);
        dump_set(s);
    }
}

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
         CALL(1, 4, "decorate"),
         INHERIT(1, 5, "base.Base"),
         INHERIT(1, 5, "Mixin"),
         CALL(2, 16, "self.setup"),
         CALL(3, 18, "property"),
         CALL(3, 20, "self.name.upper"),
         CALL(4, 25, "make_other"),
         CALL(5, 27, "app.route"),
         CALL(5, 29, "self.client.get"),
         CALL(8, 41, "Widget"),
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

    {"CRLF",
     "import os\r\n"
     "\r\n"
     "def f(a,\r\n"
     "      b):\r\n"
     "    \"\"\"Doc.\"\"\"\r\n"
     "    return a\r\n"
     "\r\n"
     "class C:\r\n"
     "    x = 1\r\n"
     "\r\n"
     "    def m(self):\r\n"
     "        pass\r\n",
     0, 0,
     (const ExpChunk[]){
         M(1, 1, NULL),
         {IDX_KIND_FUNCTION, 3, 6, 0, "f", "def f(a, b):", "Doc.", -1},
         {IDX_KIND_CLASS, 8, 9, 0, "C", "class C:", NULL, -1},
         {IDX_KIND_METHOD, 11, 12, 0, "C.m", "def m(self):", NULL, 2},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "os", NULL, "os"),
         END_REFS,
     }},

    {"form feeds and lone CR",
     "import os\n"        /* 1 */
     "\f\n"               /* 2 */
     "def f():\n"         /* 3 */
     "    x = 1\f\n"      /* 4 */
     "    return x\n"     /* 5 */
     "\f\n"               /* 6 */
     "\fdef g():\n"       /* 7 */
     "    s = \"a\rb\"\n" /* 8 */
     "    return s\n"     /* 9 */
     "# c\rd\n"           /* 10 */
     "class K:\n"         /* 11 */
     "    pass\n",        /* 12 */
     0, 0,
     (const ExpChunk[]){
         M(1, 1, NULL),
         {IDX_KIND_FUNCTION, 3, 5, 0, "f", "def f():", NULL, -1},
         {IDX_KIND_FUNCTION, 7, 9, 0, "g", "def g():", NULL, -1},
         {IDX_KIND_CLASS, 11, 12, 0, "K", "class K:", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "os", NULL, "os"),
         END_REFS,
     }},

    {"syntax errors",
     "import os\n"        /* 1 */
     "\n"                 /* 2 */
     "def broken(:\n"     /* 3 */
     "    pass\n"         /* 4 */
     "\n"                 /* 5 */
     "x = [1, 2\n"        /* 6 */
     "\n"                 /* 7 */
     "def ok():\n"        /* 8 */
     "    return 1\n"     /* 9 */
     "\n"                 /* 10 */
     "class C:\n"         /* 11 */
     "    def m(self):\n" /* 12 */
     "        pass\n",    /* 13 */
     0, 1,
     (const ExpChunk[]){
         M(1, 1, NULL),
         {IDX_KIND_FUNCTION, 3, 4, 0, "broken", "def broken(:", NULL, -1},
         M(6, 6, NULL),
         {IDX_KIND_FUNCTION, 8, 9, 0, "ok", "def ok():", NULL, -1},
         {IDX_KIND_CLASS, 11, 11, 0, "C", "class C:", NULL, -1},
         {IDX_KIND_METHOD, 12, 13, 0, "C.m", "def m(self):", NULL, 4},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "os", NULL, "os"),
         END_REFS,
     }},

    {"syntax error inside a function",
     "def f():\n"         /* 1 */
     "    x = (1,\n"      /* 2 */
     "\n"                 /* 3 */
     "def g():\n"         /* 4 */
     "    return h()\n"   /* 5 */
     "\n"                 /* 6 */
     "class K:\n"         /* 7 */
     "    def a(self):\n" /* 8 */
     "        y = ]\n"    /* 9 */
     "    def b(self):\n" /* 10 */
     "        pass\n",    /* 11 */
     0, 1,
     (const ExpChunk[]){
         {IDX_KIND_FUNCTION, 1, 2, 0, "f", "def f():", NULL, -1},
         {IDX_KIND_FUNCTION, 4, 5, 0, "g", "def g():", NULL, -1},
         {IDX_KIND_CLASS, 7, 7, 0, "K", "class K:", NULL, -1},
         {IDX_KIND_METHOD, 8, 9, 0, "K.a", "def a(self):", NULL, 2},
         {IDX_KIND_METHOD, 10, 11, 0, "K.b", "def b(self):", NULL, 2},
         END_CHUNKS,
     },
     (const ExpRef[]){
         CALL(1, 5, "h"),
         END_REFS,
     }},

    /* tree-sitter gives up on the whole file (an ERROR root): class A stays
     * module code, what follows its last line is re-parsed and chunked */
    {"syntax error, ERROR root",
     "import os\n"                 /* 1 */
     "\n"                          /* 2 */
     "class A(Base):\n"            /* 3 */
     "    x = 1\n"                 /* 4 */
     "\n"                          /* 5 */
     "    def f(self):\n"          /* 6 */
     "        for u in y:\n"       /* 7 */
     "            try:\n"          /* 8 */
     "                return x:\n" /* 9 */
     "                pass\n"      /* 10 */
     "        return 2\n"          /* 11 */
     "\n"                          /* 12 */
     "class B:\n"                  /* 13 */
     "    def g(self):\n"          /* 14 */
     "        pass\n"              /* 15 */
     "\n"                          /* 16 */
     "@deco\n"                     /* 17 */
     "def h():\n"                  /* 18 */
     "    pass\n",                 /* 19 */
     0, 1,
     (const ExpChunk[]){
         M(1, 11, NULL),
         {IDX_KIND_CLASS, 13, 13, 0, "B", "class B:", NULL, -1},
         {IDX_KIND_METHOD, 14, 15, 0, "B.g", "def g(self):", NULL, 1},
         {IDX_KIND_FUNCTION, 17, 19, 0, "h", "def h():", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "os", NULL, "os"),
         CALL(3, 17, "deco"),
         END_REFS,
     }},

    {"empty", "", 0, 0, (const ExpChunk[]){END_CHUNKS}, (const ExpRef[]){END_REFS}},
    {"blank lines", "\n\n   \n\t\n", 0, 0, (const ExpChunk[]){END_CHUNKS},
     (const ExpRef[]){END_REFS}},
    {"only comments", "# one\n#two\n\n    # three\n# four", 0, 0, (const ExpChunk[]){END_CHUNKS},
     (const ExpRef[]){END_REFS}},

    {"imports",
     "import a.b.c\n"                       /* 1 */
     "import a.b as x, d\n"                 /* 2 */
     "from m import y\n"                    /* 3 */
     "from m import (y2 as z,\n"            /* 4 */
     "               w)\n"                  /* 5 */
     "from . import q\n"                    /* 6 */
     "from ..pkg.sub import r as s\n"       /* 7 */
     "from ... import t\n"                  /* 8 */
     "from .mod import *\n"                 /* 9 */
     "from __future__ import annotations\n" /* 10 */
     "\n"                                   /* 11 */
     "def f():\n"                           /* 12 */
     "    import json\n"                    /* 13 */
     "    from .x import k\n",              /* 14 */
     0, 0,
     (const ExpChunk[]){
         M(1, 10, NULL),
         {IDX_KIND_FUNCTION, 12, 14, 0, "f", "def f():", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         IMPORT(0, 1, 0, "a.b.c", NULL, "a"),
         IMPORT(0, 2, 0, "a.b", NULL, "x"),
         IMPORT(0, 2, 0, "d", NULL, "d"),
         IMPORT(0, 3, 0, "m", "y", "y"),
         IMPORT(0, 4, 0, "m", "y2", "z"),
         IMPORT(0, 5, 0, "m", "w", "w"),
         IMPORT(0, 6, 1, "", "q", "q"),
         IMPORT(0, 7, 2, "pkg.sub", "r", "s"),
         IMPORT(0, 8, 3, "", "t", "t"),
         IMPORT(0, 9, 1, "mod", "*", "*"),
         IMPORT(0, 10, 0, "__future__", "annotations", "annotations"),
         IMPORT(1, 13, 0, "json", NULL, "json"),
         IMPORT(1, 14, 1, "x", "k", "k"),
         END_REFS,
     }},

    {"calls",
     "class A(B):\n"                   /* 1 */
     "    def run(self):\n"            /* 2 */
     "        self.helper()\n"         /* 3 */
     "        super().run()\n"         /* 4 */
     "        os.path.join(a, b)\n"    /* 5 */
     "        a().b()\n"               /* 6 */
     "        foo(bar(baz()))\n"       /* 7 */
     "        x[0]()\n"                /* 8 */
     "        (lambda: 1)()\n"         /* 9 */
     "        self.helper()\n"         /* 10 */
     "        def inner():\n"          /* 11 */
     "            nested_call()\n"     /* 12 */
     "        return f\"{fmt(x)}\"\n", /* 13 */
     0, 0,
     (const ExpChunk[]){
         {IDX_KIND_CLASS, 1, 1, 0, "A", "class A(B):", NULL, -1},
         {IDX_KIND_METHOD, 2, 13, 0, "A.run", "def run(self):", NULL, 0},
         END_CHUNKS,
     },
     (const ExpRef[]){
         INHERIT(0, 1, "B"),
         CALL(1, 3, "self.helper"),
         CALL(1, 4, "super"),
         CALL(1, 4, "?.run"),
         CALL(1, 5, "os.path.join"),
         CALL(1, 6, "a"),
         CALL(1, 6, "?.b"),
         CALL(1, 7, "foo"),
         CALL(1, 7, "bar"),
         CALL(1, 7, "baz"),
         CALL(1, 12, "nested_call"),
         CALL(1, 13, "fmt"),
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
         CALL(0, 1, "a"),
         CALL(0, 2, "b.c"),
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

    {"bases",
     "class G(Generic[T], models.Model, *mixins, metaclass=Meta, **kw):\n" /* 1 */
     "    pass\n"                                                          /* 2 */
     "class H(make_base()):\n"                                             /* 3 */
     "    pass\n"                                                          /* 4 */
     "def f():\n"                                                          /* 5 */
     "    class Local(Base):\n"                                            /* 6 */
     "        pass\n",                                                     /* 7 */
     0, 0,
     (const ExpChunk[]){
         {IDX_KIND_CLASS, 1, 2, 0, "G",
          "class G(Generic[T], models.Model, *mixins, metaclass=Meta, **kw):", NULL, -1},
         {IDX_KIND_CLASS, 3, 4, 0, "H", "class H(make_base()):", NULL, -1},
         {IDX_KIND_FUNCTION, 5, 7, 0, "f", "def f():", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         INHERIT(0, 1, "Generic"),
         INHERIT(0, 1, "models.Model"),
         CALL(1, 3, "make_base"),
         INHERIT(2, 6, "Base"),
         END_REFS,
     }},

    {"raise and except",
     "def f():\n"                                     /* 1 */
     "    try:\n"                                     /* 2 */
     "        g()\n"                                  /* 3 */
     "    except ValueError:\n"                       /* 4 */
     "        raise\n"                                /* 5 */
     "    except (KeyError, errors.NotFound) as e:\n" /* 6 */
     "        raise errors.Wrapped from e\n"          /* 7 */
     "    except OSError as e:\n"                     /* 8 */
     "        raise RuntimeError('x') from e\n"       /* 9 */
     "    raise StopIteration\n"                      /* 10 */
     "    try:\n"                                     /* 11 */
     "        pass\n"                                 /* 12 */
     "    except* TypeError:\n"                       /* 13 */
     "        raise ValueError\n",                    /* 14 */
     0, 0,
     (const ExpChunk[]){
         {IDX_KIND_FUNCTION, 1, 14, 0, "f", "def f():", NULL, -1},
         END_CHUNKS,
     },
     (const ExpRef[]){
         CALL(0, 3, "g"),
         RAISE(0, 4, "ValueError"),
         RAISE(0, 6, "KeyError"),
         RAISE(0, 6, "errors.NotFound"),
         RAISE(0, 7, "errors.Wrapped"),
         RAISE(0, 8, "OSError"),
         CALL(0, 9, "RuntimeError"),
         RAISE(0, 10, "StopIteration"),
         RAISE(0, 13, "TypeError"),
         END_REFS,
     }},
};

static void test_table(void)
{
    Chunker *ck = idx_chunker_new();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const ChunkCase *tc = &cases[i];
        ChunkSet s = {0};
        ErrInfo e = {0};
        size_t len = strlen(tc->src);
        CHECK_INT(idx_chunker_run(ck, tc->src, len, tc->max_lines, &s, &e), CR_OK);
        CHECK_INT(s.had_errors, tc->had_errors);
        check_set(tc->name, tc->src, len, tc->max_lines, &s, tc->chunks, tc->refs);
        idx_chunk_set_release(&s);
        CHECK(s.chunks == NULL && s.n_chunks == 0 && s.refs == NULL && s.n_refs == 0);
    }
    idx_chunker_free(ck);
    idx_chunker_free(NULL);
    idx_chunk_set_release(NULL);
}

/* ---------------------------------------------------------------- long units */

/* A 230-line function: the first cut moves back to the multi-line statement
 * at 95, the second finds no statement start in 165..195 (a list literal
 * spans 160..200) and cuts at 100 lines. */
static void test_long_function(void)
{
    StrBuf sb;
    sb_init(&sb);
    sb_adds(&sb, "def big():\n");                    /* 1 */
    sb_adds(&sb, "    \"\"\"Big function.\"\"\"\n"); /* 2 */
    for (int l = 3; l <= 94; l++)
        sb_adds(&sb, "    x += 1\n");
    sb_adds(&sb, "    total = compute(\n"); /* 95 */
    for (int l = 96; l <= 104; l++)
        sb_adds(&sb, "        1,\n");
    sb_adds(&sb, "    )\n"); /* 105 */
    for (int l = 106; l <= 159; l++)
        sb_adds(&sb, "    x += 1\n");
    sb_adds(&sb, "    items = [\n"); /* 160 */
    for (int l = 161; l <= 199; l++)
        sb_adds(&sb, "        1,\n");
    sb_adds(&sb, "    ]\n"); /* 200 */
    for (int l = 201; l <= 229; l++)
        sb_adds(&sb, "    x += 1\n");
    sb_adds(&sb, "    return x\n"); /* 230 */
    sb_adds(&sb, "\n");             /* 231 */
    sb_adds(&sb, "y = big()\n");    /* 232 */

    Chunker *ck = idx_chunker_new();
    ChunkSet s = {0};
    CHECK_INT(idx_chunker_run(ck, sb.buf, sb.len, 0, &s, NULL), CR_OK);
    const ExpChunk xc[] = {
        {IDX_KIND_FUNCTION, 1, 94, 1, "big", "def big():", "Big function.", -1},
        {IDX_KIND_FUNCTION, 95, 194, 2, "big", "def big():", "Big function.", -1},
        {IDX_KIND_FUNCTION, 195, 230, 3, "big", "def big():", "Big function.", -1},
        M(232, 232, NULL),
        END_CHUNKS,
    };
    const ExpRef xr[] = {CALL(1, 95, "compute"), CALL(3, 232, "big"), END_REFS};
    check_set("long function", sb.buf, sb.len, 0, &s, xc, xr);
    idx_chunk_set_release(&s);
    idx_chunker_free(ck);
    sb_release(&sb);
}

/* A class whose header run is 152 lines (a dict literal over 98..103 moves
 * the cut back), then a method, then one more class-level line. */
static void test_long_class_run(void)
{
    StrBuf sb;
    sb_init(&sb);
    sb_adds(&sb, "class Config:\n");             /* 1 */
    sb_adds(&sb, "    \"\"\"Settings.\"\"\"\n"); /* 2 */
    for (int l = 3; l <= 97; l++)
        sb_addf(&sb, "    A%d = %d\n", l, l);
    sb_adds(&sb, "    TABLE = {\n"); /* 98 */
    for (int l = 99; l <= 102; l++)
        sb_addf(&sb, "        %d: %d,\n", l, l);
    sb_adds(&sb, "    }\n"); /* 103 */
    for (int l = 104; l <= 152; l++)
        sb_addf(&sb, "    B%d = %d\n", l, l);
    sb_adds(&sb, "\n");                       /* 153 */
    sb_adds(&sb, "    def m(self):\n");       /* 154 */
    sb_adds(&sb, "        return self.A3\n"); /* 155 */
    sb_adds(&sb, "\n");                       /* 156 */
    sb_adds(&sb, "    LAST = m\n");           /* 157 */

    Chunker *ck = idx_chunker_new();
    ChunkSet s = {0};
    CHECK_INT(idx_chunker_run(ck, sb.buf, sb.len, 0, &s, NULL), CR_OK);
    const ExpChunk xc[] = {
        {IDX_KIND_CLASS, 1, 97, 1, "Config", "class Config:", "Settings.", -1},
        {IDX_KIND_CLASS, 98, 152, 2, "Config", "class Config:", "Settings.", -1},
        {IDX_KIND_METHOD, 154, 155, 0, "Config.m", "def m(self):", NULL, 0},
        {IDX_KIND_CLASS, 157, 157, 0, "Config", "class Config:", NULL, -1},
        END_CHUNKS,
    };
    const ExpRef xr[] = {END_REFS};
    check_set("long class run", sb.buf, sb.len, 0, &s, xc, xr);
    idx_chunk_set_release(&s);
    idx_chunker_free(ck);
    sb_release(&sb);
}

/* ---------------------------------------------------------------- deep nesting */

static void test_deep_nesting(void)
{
    Chunker *ck = idx_chunker_new();
    StrBuf sb;
    sb_init(&sb);

    sb_adds(&sb, "x = ");
    for (int i = 0; i < 10000; i++)
        sb_addc(&sb, '(');
    sb_addc(&sb, '1');
    for (int i = 0; i < 10000; i++)
        sb_addc(&sb, ')');
    sb_adds(&sb, "\ndef f():\n    return g(");
    for (int i = 0; i < 10000; i++)
        sb_adds(&sb, "g(");
    for (int i = 0; i < 10001; i++)
        sb_addc(&sb, ')');
    sb_adds(&sb, "\n");
    ChunkSet s = {0};
    CHECK_INT(idx_chunker_run(ck, sb.buf, sb.len, 0, &s, NULL), CR_OK);
    const ExpChunk xc[] = {
        M(1, 1, NULL),
        {IDX_KIND_FUNCTION, 2, 3, 0, "f", "def f():", NULL, -1},
        END_CHUNKS,
    };
    const ExpRef xr[] = {CALL(1, 3, "g"), END_REFS};
    check_set("10,000 nested parentheses", sb.buf, sb.len, 0, &s, xc, xr);
    idx_chunk_set_release(&s);

    sb_reset(&sb);
    for (int i = 0; i < 3000; i++) {
        for (int k = 0; k < i; k++)
            sb_addc(&sb, ' ');
        sb_adds(&sb, "if x:\n");
    }
    for (int k = 0; k < 3000; k++)
        sb_addc(&sb, ' ');
    sb_adds(&sb, "pass\n");
    sb_adds(&sb, "def after():\n    pass\n");
    CHECK_INT(idx_chunker_run(ck, sb.buf, sb.len, 0, &s, NULL), CR_OK);
    check_invariants("3,000 nested if blocks", sb.buf, sb.len, 0, &s);
    CHECK(s.n_chunks > 0);
    idx_chunk_set_release(&s);

    sb_release(&sb);
    idx_chunker_free(ck);
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
                CHECK_INT(idx_chunker_run(ck, src.buf, src.len, maxes[i], &s, NULL), CR_OK);
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
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ChunkSet s = {0};
        size_t len = strlen(cases[i].src);
        CHECK_INT(idx_chunker_run(ck, cases[i].src, len, 3, &s, NULL), CR_OK);
        check_invariants(cases[i].name, cases[i].src, len, 3, &s);
        idx_chunk_set_release(&s);
    }
    idx_chunker_free(ck);
}

int main(void)
{
    RUN(test_table);
    RUN(test_long_function);
    RUN(test_long_class_run);
    RUN(test_deep_nesting);
    RUN(test_fixture_invariants);
    return test_summary();
}
