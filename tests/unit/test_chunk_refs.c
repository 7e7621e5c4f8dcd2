/*
 * test_chunk_refs.c - the references the Python chunker (index/chunk/chunk.c)
 * records: imports, calls and instantiations, base classes, raise and
 * except; and the line-coverage invariant over these sources.
 */
#include "chunk_util.h"

static const ChunkCase cases[] = {
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
         CALL(1, 4, "super().run"),
         CALL(1, 5, "os.path.join"),
         CALL(1, 6, "a"),
         CALL(1, 6, "a().b"), /* b of what a returns (graph_types.c) */
         CALL(1, 7, "foo"),
         CALL(1, 7, "bar"),
         CALL(1, 7, "baz"),
         CALL(1, 12, "nested_call"),
         CALL(1, 13, "fmt"),
         END_REFS,
     }},

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
    run_cases(cases, sizeof cases / sizeof cases[0]);
}

static void test_case_invariants(void)
{
    cases_invariants(cases, sizeof cases / sizeof cases[0]);
}

int main(void)
{
    RUN(test_table);
    RUN(test_case_invariants);
    return test_summary();
}
