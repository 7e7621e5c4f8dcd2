/*
 * python.c - the Python chunker: tree-sitter parse, one chunk per function,
 * method and class (split into windows past max_lines), module code in the
 * gaps, and the references (imports, calls, bases, raises) of every chunk.
 *
 * Lines are '\n'-separated and 1-based; tree-sitter rows count the same way.
 * Every line is owned by exactly one unit (a definition or the module), inner
 * definitions overriding outer ones; chunks are the owned runs, so no line is
 * ever in two chunks and no code line is ever dropped.
 */
#include "python_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

#define CHUNK__DEFAULT_MAX 100u
#define CHUNK__MAX_SEGMENTS 64

static TSSymbol chunk__sym(const TSLanguage *l, const char *name, int named)
{
    TSSymbol s = ts_language_symbol_for_name(l, name, (uint32_t)strlen(name), named);
    if (!s) log_msg(LOG_ERROR, "chunk: grammar has no node type '%s'", name);
    return s;
}

static TSFieldId chunk__field(const TSLanguage *l, const char *name)
{
    TSFieldId f = ts_language_field_id_for_name(l, name, (uint32_t)strlen(name));
    if (!f) log_msg(LOG_ERROR, "chunk: grammar has no field '%s'", name);
    return f;
}

static PyChunker *idx_py_chunker_new(void)
{
    const TSLanguage *l = tree_sitter_python();
    PyChunker *c = xcalloc(1, sizeof *c);
    c->parser = ts_parser_new();
    ts_parser_set_language(c->parser, l);

    ChunkSyms *s = &c->sy;
    s->module = chunk__sym(l, "module", 1);
    s->block = chunk__sym(l, "block", 1);
    s->comment = chunk__sym(l, "comment", 1);
    s->function_definition = chunk__sym(l, "function_definition", 1);
    s->class_definition = chunk__sym(l, "class_definition", 1);
    s->decorated_definition = chunk__sym(l, "decorated_definition", 1);
    s->decorator = chunk__sym(l, "decorator", 1);
    s->import_statement = chunk__sym(l, "import_statement", 1);
    s->import_from_statement = chunk__sym(l, "import_from_statement", 1);
    s->future_import_statement = chunk__sym(l, "future_import_statement", 1);
    s->aliased_import = chunk__sym(l, "aliased_import", 1);
    s->dotted_name = chunk__sym(l, "dotted_name", 1);
    s->relative_import = chunk__sym(l, "relative_import", 1);
    s->import_prefix = chunk__sym(l, "import_prefix", 1);
    s->wildcard_import = chunk__sym(l, "wildcard_import", 1);
    s->call = chunk__sym(l, "call", 1);
    s->attribute = chunk__sym(l, "attribute", 1);
    s->identifier = chunk__sym(l, "identifier", 1);
    s->subscript = chunk__sym(l, "subscript", 1);
    s->raise_statement = chunk__sym(l, "raise_statement", 1);
    s->except_clause = chunk__sym(l, "except_clause", 1);
    s->except_group_clause = chunk__sym(l, "except_group_clause", 1);
    s->expression_statement = chunk__sym(l, "expression_statement", 1);
    s->string = chunk__sym(l, "string", 1);
    s->concatenated_string = chunk__sym(l, "concatenated_string", 1);
    s->tuple = chunk__sym(l, "tuple", 1);
    s->parenthesized_expression = chunk__sym(l, "parenthesized_expression", 1);
    s->as_pattern = chunk__sym(l, "as_pattern", 1);
    s->colon = chunk__sym(l, ":", 0);
    s->assignment = chunk__sym(l, "assignment", 1);
    s->typed_parameter = chunk__sym(l, "typed_parameter", 1);
    s->typed_default_parameter = chunk__sym(l, "typed_default_parameter", 1);
    s->for_statement = chunk__sym(l, "for_statement", 1);
    s->for_in_clause = chunk__sym(l, "for_in_clause", 1);
    s->augmented_assignment = chunk__sym(l, "augmented_assignment", 1);
    s->return_statement = chunk__sym(l, "return_statement", 1);
    s->if_statement = chunk__sym(l, "if_statement", 1);
    s->not_operator = chunk__sym(l, "not_operator", 1);
    static const char *const bare[] = {"call",
                                       "attribute",
                                       "subscript",
                                       "tuple",
                                       "parenthesized_expression",
                                       "not_operator",
                                       "binary_operator",
                                       "comparison_operator",
                                       "boolean_operator",
                                       "keyword_argument",
                                       "list",
                                       "dictionary",
                                       "set",
                                       "conditional_expression",
                                       "unary_operator",
                                       "lambda",
                                       "argument_list",
                                       "pair",
                                       "await"};
    s->n_bare = 0;
    for (size_t i = 0;
         i < sizeof bare / sizeof *bare && s->n_bare < sizeof s->bare / sizeof *s->bare; i++) {
        TSSymbol b = chunk__sym(l, bare[i], 1);
        if (b) s->bare[s->n_bare++] = b;
    }
    s->f_name = chunk__field(l, "name");
    s->f_body = chunk__field(l, "body");
    s->f_definition = chunk__field(l, "definition");
    s->f_superclasses = chunk__field(l, "superclasses");
    s->f_module_name = chunk__field(l, "module_name");
    s->f_alias = chunk__field(l, "alias");
    s->f_function = chunk__field(l, "function");
    s->f_object = chunk__field(l, "object");
    s->f_attribute = chunk__field(l, "attribute");
    s->f_value = chunk__field(l, "value");
    s->f_cause = chunk__field(l, "cause");
    s->f_left = chunk__field(l, "left");
    s->f_right = chunk__field(l, "right");
    s->f_type = chunk__field(l, "type");
    s->f_parameters = chunk__field(l, "parameters");
    s->f_return_type = chunk__field(l, "return_type");
    s->f_condition = chunk__field(l, "condition");
    s->f_consequence = chunk__field(l, "consequence");
    s->f_alternative = chunk__field(l, "alternative");
    s->f_argument = chunk__field(l, "argument");
    s->f_arguments = chunk__field(l, "arguments");
    return c;
}

static void idx_py_chunker_free(PyChunker *c)
{
    if (!c) return;
    ts_parser_delete(c->parser);
    free(c);
}

/* ---------------------------------------------------------------- lines */

static void chunk__lines_init(ChunkRun *r)
{
    const char *s = r->src;
    idx_emit_init(&r->em, s, r->len, r->max_lines);
    r->n_lines = r->em.n_lines;
    r->line_start = r->em.line_start;
    r->line_kind = r->em.line_kind;
    r->cut = r->em.cut;
    for (uint32_t l = 1; l <= r->n_lines; l++) {
        uint32_t p = r->line_start[l], end = r->line_start[l + 1];
        if (end > p && s[end - 1] == '\n') end--;
        if (l == 1 && end - p >= 3 && !memcmp(s + p, "\xEF\xBB\xBF", 3)) p += 3;
        while (p < end && py_is_space(s[p]))
            p++;
        r->line_kind[l] = p == end ? CHUNK__BLANK : s[p] == '#' ? CHUNK__COMMENT : CHUNK__CODE;
    }
}

/* Line (1-based) holding byte b. */
/* Line of the last non-blank byte of [start, end), clipped to the segment:
 * node ends may sit past trailing newlines or zero-width MISSING tokens. */
static uint32_t chunk__end_line(const ChunkRun *r, uint32_t start, uint32_t end)
{
    if (end > r->seg_end_byte) end = r->seg_end_byte;
    if (end > r->len) end = r->len;
    while (end > start && py_is_space(r->src[end - 1]))
        end--;
    return idx_emit_line_of(&r->em, end > start ? end - 1 : start);
}

/* ---------------------------------------------------------------- units */

static int chunk__unit_new(ChunkRun *r, TSNode def, TSNode outer, const ChunkFrame *up)
{
    const ChunkSyms *sy = r->sy;
    TSNode name = ts_node_child_by_field_id(def, sy->f_name);
    if (ts_node_is_null(name) || ts_node_start_byte(name) >= ts_node_end_byte(name)) return -1;
    uint32_t start = py_node_line(outer);
    if (start > r->n_lines) return -1;
    /* the enclosing class keeps its header line, whatever error recovery did */
    if (up->ctx == CHUNK__CTX_CLASS && start <= r->units[up->unit].start) return -1;
    uint32_t end = chunk__end_line(r, ts_node_start_byte(outer), ts_node_end_byte(def));
    if (end < start) end = start;

    ARRAY_GROW(r->units, r->n_units + 1, r->cap_units);
    int id = (int)r->n_units++;
    ChunkUnit *u = &r->units[id];
    memset(u, 0, sizeof *u);
    int is_class = ts_node_symbol(def) == sy->class_definition;
    u->kind = is_class                      ? IDX_KIND_CLASS
              : up->ctx == CHUNK__CTX_CLASS ? IDX_KIND_METHOD
                                            : IDX_KIND_FUNCTION;
    u->parent = up->ctx == CHUNK__CTX_CLASS ? up->unit : -1;
    u->start = start;
    u->end = end;
    u->def = def;
    u->outer = outer;

    StrBuf sym;
    sb_init(&sym);
    if (u->parent >= 0) {
        sb_adds(&sym, r->units[u->parent].symbol);
        sb_addc(&sym, '.');
    }
    size_t name_off = sym.len;
    idx_py_add_text(r, &sym, name);
    u->symbol = sb_detach(&sym, NULL);
    u->name = u->symbol + name_off;

    /* the header ends at the last ':' before the body */
    TSTreeCursor *c = &r->aux;
    TSNode body = {0};
    ts_tree_cursor_reset(c, def);
    if (ts_tree_cursor_goto_first_child(c)) {
        do {
            TSNode n = ts_tree_cursor_current_node(c);
            if (ts_tree_cursor_current_field_id(c) == sy->f_body) {
                body = n;
                break;
            }
            if (ts_node_symbol(n) == sy->colon && !ts_node_is_missing(n))
                u->sig_end = ts_node_end_byte(n);
        } while (ts_tree_cursor_goto_next_sibling(c));
    }
    if (!u->sig_end) {
        uint32_t l = py_node_line(def);
        uint32_t eol = l <= r->n_lines ? r->line_start[l + 1] : r->len;
        u->sig_end = ts_node_end_byte(def) < eol ? ts_node_end_byte(def) : eol;
    }
    u->docstring = idx_py_docstring(r, body, NULL);
    return id;
}

/* One-line header: comments dropped, whitespace runs and line continuations
 * collapsed to one space. Needs all comments collected. */
static char *chunk__signature(ChunkRun *r, const ChunkUnit *u)
{
    uint32_t a = ts_node_start_byte(u->def), b = u->sig_end;
    size_t lo = 0, hi = r->n_comments;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->comments[2 * mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t ci = lo;
    int space = 0;
    sb_reset(&r->sb);
    if (b > r->len) b = r->len;
    for (uint32_t i = a; i < b; i++) {
        if (ci < r->n_comments && i >= r->comments[2 * ci]) {
            i = r->comments[2 * ci + 1] - 1;
            ci++;
            space = 1;
            continue;
        }
        char ch = r->src[i];
        if (py_is_space(ch) ||
            (ch == '\\' && i + 1 < b && (r->src[i + 1] == '\n' || r->src[i + 1] == '\r'))) {
            space = 1;
            continue;
        }
        if (space && r->sb.len) sb_addc(&r->sb, ' ');
        space = 0;
        sb_addc(&r->sb, ch);
    }
    return xstrndup(r->sb.buf, r->sb.len);
}

/* ---------------------------------------------------------------- walk */

/* Whether an `if` condition is false on the platform code is read for
 * (Linux): `sys.platform == "win32"`, `sys.platform.startswith("win")` (any
 * platform but linux), `os.name == "nt"`, alone or and-ed with anything. */
static int chunk__other_platform(ChunkRun *r, TSNode cond)
{
    static const struct {
        const char *head, *close, *here; /* here: the value on Linux */
        int prefix;                      /* a prefix of it (startswith) */
    } tests[] = {{"sys.platform==", "", "linux", 0},
                 {"sys.platform.startswith(", ")", "linux", 1},
                 {"os.name==", "", "posix", 0}};
    idx_py_squeezed(r, cond, &r->sb2);
    const char *p = r->sb2.buf ? r->sb2.buf : "";
    size_t n = r->sb2.len;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        size_t k = strlen(tests[i].head);
        if (n <= k + 1 || memcmp(p, tests[i].head, k)) continue;
        char q = p[k];
        const char *v = p + k + 1, *end = q == '"' || q == '\'' ? memchr(v, q, n - k - 1) : NULL;
        if (!end) return 0;
        size_t vlen = (size_t)(end - v), clen = strlen(tests[i].close),
               hlen = strlen(tests[i].here);
        size_t after = (size_t)(end - p) + 1 + clen;
        if (after > n || memcmp(end + 1, tests[i].close, clen)) return 0;
        int here = tests[i].prefix ? vlen <= hlen && !memcmp(v, tests[i].here, vlen)
                                   : vlen == hlen && !memcmp(v, tests[i].here, hlen);
        return !here && (after == n || (n - after > 3 && !memcmp(p + after, "and", 3)));
    }
    return 0;
}

/* Visits one node in its parent's context; returns its children's context. */
static ChunkFrame chunk__visit(ChunkRun *r, TSNode n, const ChunkFrame *up)
{
    const ChunkSyms *sy = r->sy;
    TSSymbol s = ts_node_symbol(n);
    ChunkFrame f = {s, up->ctx, up->unit, -1, up->deco, up->dead};
    int cls_unit = -1;

    if (s == sy->comment) {
        ARRAY_GROW(r->comments, 2 * r->n_comments + 2, r->cap_comments);
        r->comments[2 * r->n_comments] = ts_node_start_byte(n);
        r->comments[2 * r->n_comments + 1] = ts_node_end_byte(n);
        r->n_comments++;
        return f;
    }
    if (!ts_node_is_named(n)) return f;

    if (up->ctx == CHUNK__CTX_MODULE && up->sym == sy->if_statement && r->cur &&
        ts_tree_cursor_current_field_id(r->cur) == sy->f_consequence) {
        TSNode cond = ts_node_child_by_field_id(ts_node_parent(n), sy->f_condition);
        if (!ts_node_is_null(cond) && chunk__other_platform(r, cond)) f.dead = 1;
    }
    if (up->ctx != CHUNK__CTX_FUNC) {
        if (up->sym == sy->module || up->sym == sy->block) {
            uint32_t l = py_node_line(n);
            if (l <= r->n_lines) r->cut[l] = 1;
        }
        if (s == sy->decorated_definition) {
            TSNode d = ts_node_child_by_field_id(n, sy->f_definition);
            if (!ts_node_is_null(d)) f.pending = chunk__unit_new(r, d, n, up);
        } else if (s == sy->function_definition || s == sy->class_definition) {
            int u =
                up->sym == sy->decorated_definition ? up->pending : chunk__unit_new(r, n, n, up);
            f.unit = u;
            f.ctx = s == sy->class_definition && u >= 0 ? CHUNK__CTX_CLASS : CHUNK__CTX_FUNC;
            if (s == sy->class_definition) cls_unit = u;
        }
    }

    if (s == sy->attribute) {
        /* a read of `self.name` that is no call: a property's getter runs */
        TSFieldId field = r->cur ? ts_tree_cursor_current_field_id(r->cur) : 0;
        int called = up->sym == sy->call && field == sy->f_function;
        int written = (up->sym == sy->assignment || up->sym == sy->augmented_assignment) &&
                      field == sy->f_left;
        if (!called) idx_py_ref_attr_read(r, n, written, f.deco);
    } else if (s == sy->call) {
        idx_py_ref_chain(r, REF_CALL, f.deco, ts_node_child_by_field_id(n, sy->f_function));
    } else if (s == sy->import_statement || s == sy->import_from_statement ||
               s == sy->future_import_statement) {
        if (!f.dead) idx_py_ref_import(r, n);
    } else if (s == sy->decorator) {
        /* `@cached_property` names a function the definition is passed to:
         * a reference, not a call written here (`@app.route("/")` calls
         * app.route, found as any call is: where the definition is written,
         * the module's code or the class's, as the decorator runs there) */
        TSNode e = idx_py_first_named(r, n);
        if (up->sym == sy->decorated_definition && up->ctx != CHUNK__CTX_FUNC)
            f.deco = up->unit >= 0 ? up->unit : IDX_EMIT_MODULE;
        if (!ts_node_is_null(e) && ts_node_symbol(e) != sy->call)
            idx_py_ref_chain(r, REF_VALUE, -1, e);
    } else if (s == sy->class_definition) {
        idx_py_ref_bases(r, n, cls_unit);
    } else if (s == sy->raise_statement) {
        idx_py_ref_raise(r, n);
    } else if (s == sy->except_clause) {
        idx_py_ref_caught(r, ts_node_child_by_field_id(n, sy->f_value));
    } else if (s == sy->except_group_clause) {
        idx_py_ref_caught(r, idx_py_first_named(r, n));
    }
    return f;
}

/* Depth-first over one tree without recursion (inputs nest arbitrarily deep);
 * nodes starting at or past r->seg_end_byte belong to a later segment. With
 * nest, every node is visited and its depth counted (idx_ts_nest_step): the
 * bound on nesting checked by this walk, CR_ETOOBIG past it. */
static CrErr chunk__walk(ChunkRun *r, TSNode root, IdxTsNest *nest, ErrInfo *e)
{
    TSTreeCursor cur = ts_tree_cursor_new(root);
    ChunkFrame top = {0, CHUNK__CTX_MODULE, -1, -1, -1, 0};
    size_t depth = 0;
    CrErr rc = nest ? idx_ts_nest_step(nest, 0, e) : CR_OK;
    ARRAY_GROW(r->frames, 1, r->cap_frames);
    r->cur = &cur;
    if (!rc) r->frames[0] = chunk__visit(r, root, &top);
    int descend = 1;
    while (!rc && idx_ts_walk_next(&cur, &depth, descend)) {
        if (nest && (rc = idx_ts_nest_step(nest, depth, e))) break;
        TSNode n = ts_tree_cursor_current_node(&cur);
        if (ts_node_start_byte(n) >= r->seg_end_byte) {
            descend = 0;
            continue;
        }
        ARRAY_GROW(r->frames, depth + 1, r->cap_frames);
        r->frames[depth] = chunk__visit(r, n, &r->frames[depth - 1]);
        descend = 1;
    }
    r->cur = NULL;
    ts_tree_cursor_delete(&cur);
    return rc;
}

/* ---------------------------------------------------------------- chunks */

/* Marks the statements of a function body as cut points. */
static void chunk__mark_body(ChunkRun *r, const ChunkUnit *u)
{
    TSNode body = ts_node_child_by_field_id(u->def, r->sy->f_body);
    TSTreeCursor *c = &r->aux;
    if (ts_node_is_null(body)) return;
    ts_tree_cursor_reset(c, body);
    if (!ts_tree_cursor_goto_first_child(c)) return;
    do {
        TSNode n = ts_tree_cursor_current_node(c);
        uint32_t l = py_node_line(n);
        if (ts_node_is_named(n) && ts_node_symbol(n) != r->sy->comment && l <= r->n_lines)
            r->cut[l] = 1;
    } while (ts_tree_cursor_goto_next_sibling(c));
}

/* Hands the units to the shared emission (chunk_emit.c): signatures first
 * (they need every comment), body statements as cut points of long
 * functions, the module docstring to the module run holding it. */
static void chunk__build(ChunkRun *r, ChunkSet *out)
{
    for (size_t i = 0; i < r->n_units; i++) {
        ChunkUnit *u = &r->units[i];
        u->signature = chunk__signature(r, u);
        if (u->kind != IDX_KIND_CLASS && u->end - u->start + 1 > r->max_lines)
            chunk__mark_body(r, u);
        idx_emit_unit_add(&r->em, u->kind, u->parent, u->start, u->end, u->symbol, u->signature,
                          u->docstring);
        u->symbol = u->signature = u->docstring = NULL; /* owned by em now */
    }
    r->em.module_doc = r->mod_doc;
    r->em.module_doc_line = r->mod_doc_line;
    idx_emit_build(&r->em, out);
}

/* Attributes references to chunks, drops duplicates, moves them to out. */
static void chunk__refs_out(ChunkRun *r, ChunkSet *out)
{
    r->em.refs = r->refs;
    r->em.n_refs = r->n_refs;
    r->em.cap_refs = r->cap_refs;
    r->refs = NULL;
    r->n_refs = r->cap_refs = 0;
    idx_emit_refs_out(&r->em, out);
}

static void chunk__run_release(ChunkRun *r)
{
    for (size_t i = 0; i < r->n_units; i++) {
        free(r->units[i].symbol);
        free(r->units[i].signature);
        free(r->units[i].docstring);
    }
    for (size_t i = 0; i < r->n_refs; i++) {
        free(r->refs[i].module);
        free(r->refs[i].member);
        free(r->refs[i].alias);
        free(r->refs[i].name);
    }
    free(r->units);
    free(r->refs);
    free(r->comments);
    free(r->frames);
    free(r->chain);
    idx_emit_release(&r->em);
    free(r->mod_doc);
    sb_release(&r->sb);
    sb_release(&r->sb2);
}

/* Proxies of well-known frameworks: the name imported, the class it stands
 * for (the row's receiver_proxies; the chunker's typed receivers read it). */
static const char *const py__receiver_proxies[] = {
    "current_app", "flask.Flask", "request", "flask.Request", "g", "flask.ctx._AppCtxGlobals", NULL,
};

/* Appends to out without releasing anything in it: callers pass a zeroed or
 * released set (indices in what is appended count from out->n_chunks). */
static CrErr idx_py_chunker_run(PyChunker *c, TsKeep *keep, const char *src, size_t len,
                                uint32_t max_lines, ChunkSet *out, ErrInfo *e)
{
    TSTree *trees[CHUNK__MAX_SEGMENTS] = {0};
    uint32_t seg_byte[CHUNK__MAX_SEGMENTS + 1], seg_line[CHUNK__MAX_SEGMENTS];
    size_t n_trees = 0;
    ChunkRun r;
    CrErr rc = CR_OK;

    memset(&r, 0, sizeof r);
    sb_init(&r.sb);
    sb_init(&r.sb2);
    if (!src) len = 0;
    if (!src) src = "";
    IdxTsWork work;
    idx_ts_work_init(&work, len);
    if ((rc = idx_ts_text_check(src, len, &work, 0, e))) goto out;
    ts_parser_set_included_ranges(c->parser, NULL, 0);
    if ((rc = idx_ts_parse_counted(c->parser, keep, src, len, &work, &trees[0], e))) goto out;
    n_trees = 1;
    seg_byte[0] = 0;
    seg_line[0] = 1;

    r.sy = &c->sy;
    r.src = src;
    r.len = (uint32_t)len;
    r.max_lines = max_lines ? max_lines : CHUNK__DEFAULT_MAX;
    r.seg_end_byte = UINT32_MAX;
    chunk__lines_init(&r);
    TSNode root = ts_tree_root_node(trees[0]);
    r.aux = ts_tree_cursor_new(root);
    r.aux2 = ts_tree_cursor_new(root);
    out->had_errors = out->had_errors || ts_node_has_error(root);

    /* re-parses cost at most a few whole parses, however broken the file */
    uint64_t budget = 4 * (uint64_t)len + 65536;
    while (n_trees < CHUNK__MAX_SEGMENTS) {
        TSNode last = ts_tree_root_node(trees[n_trees - 1]);
        if (!ts_node_has_error(last)) break;
        uint32_t l = idx_py_find_cut(&r, last, seg_line[n_trees - 1]);
        if (!l || len - r.line_start[l] > budget) break;
        budget -= len - r.line_start[l];
        TSRange range = {{l - 1, 0}, {UINT32_MAX, UINT32_MAX}, r.line_start[l], UINT32_MAX};
        if (!ts_parser_set_included_ranges(c->parser, &range, 1)) break;
        TSTree *t = NULL;
        ErrInfo seg_e = {0};
        CrErr seg_rc = idx_ts_parse_counted(c->parser, NULL, src, len, &work, &t, &seg_e);
        ts_parser_set_included_ranges(c->parser, NULL, 0);
        if (seg_rc) break; /* the segments before it stand */
        seg_byte[n_trees] = range.start_byte;
        seg_line[n_trees] = l;
        trees[n_trees++] = t;
    }
    seg_byte[n_trees] = UINT32_MAX;
    /* one tree: its walk below visits every node and checks the nesting as
     * it goes; segments' walks stop at their ends, so each whole tree is
     * checked first */
    for (size_t i = 0; n_trees > 1 && i < n_trees && !rc; i++)
        rc = idx_ts_nesting_work(ts_tree_root_node(trees[i]), len - seg_byte[i], &work, 0, e);
    IdxTsNest nest;
    idx_ts_nest_init(&nest, len);

    if (ts_node_symbol(root) == c->sy.module)
        r.mod_doc = idx_py_docstring(&r, root, &r.mod_doc_line);
    if (r.mod_doc && n_trees > 1 && r.mod_doc_line >= seg_line[1]) {
        free(r.mod_doc);
        r.mod_doc = NULL;
    }
    for (size_t i = 0; i < n_trees && !rc; i++) {
        r.seg_end_byte = seg_byte[i + 1];
        rc = chunk__walk(&r, ts_tree_root_node(trees[i]), n_trees == 1 ? &nest : NULL, e);
    }
    /* the file's work (lang.h): its nodes (segments' counted above), then
     * what it defines and refers to, before any of it is typed or kept */
    if (!rc) rc = idx_ts_work_tree(&work, nest.nodes, IDX_TS_WORK_WALK, "its nodes", e);
    if (!rc) rc = idx_ts_work_add(&work, r.n_refs, IDX_TS_WORK_REF, "its references", e);
    if (!rc) rc = idx_ts_work_add(&work, r.n_units, IDX_TS_WORK_DEF, "its definitions", e);
    if (rc) {
        ts_tree_cursor_delete(&r.aux);
        ts_tree_cursor_delete(&r.aux2);
        goto out;
    }
    TSNode roots[CHUNK__MAX_SEGMENTS];
    for (size_t i = 0; i < n_trees; i++)
        roots[i] = ts_tree_root_node(trees[i]);
    idx_py_type_refs(&r, roots, n_trees, py__receiver_proxies);
    chunk__build(&r, out);
    chunk__refs_out(&r, out);
    ts_tree_cursor_delete(&r.aux);
    ts_tree_cursor_delete(&r.aux2);
    rc = idx_ts_work_kept(&work, out, e);

out:
    for (size_t i = 0; i < n_trees; i++)
        ts_tree_delete(trees[i]);
    chunk__run_release(&r);
    return rc;
}

/* ---------------------------------------------------------------- the row */

/* Python's module names: "a/b/c.py" -> "a.b.c", "a/b/__init__.py" -> "a.b". */
char *idx_path_to_module(const char *relpath)
{
    size_t n = strlen(relpath);
    if (n >= 3 && !strcmp(relpath + n - 3, ".py")) n -= 3;
    if (n >= 9 && !strncmp(relpath + n - 9, "/__init__", 9))
        n -= 9;
    else if (n == 8 && !strncmp(relpath, "__init__", 8))
        n = 0;
    char *m = xstrndup(relpath, n);
    for (char *p = m; *p; p++)
        if (*p == '/') *p = '.';
    return m;
}

static const char *const py__exts[] = {".py", NULL};
static const char *const py__interps[] = {"python", NULL};
static const char *const py__pkg_files[] = {"__init__.py", NULL};

static const char *const py__markers[] = {"pyproject.toml", "setup.py", "setup.cfg", NULL};
/* Methods of the built-in and standard types every program handles (str,
 * list, dict, set; files, paths, sockets, regex matches, import finders): a
 * call of one on a receiver the indexer cannot type is not a workspace
 * method found by its name alone. */
static const char *const py__builtin_methods[] = {
    "add",        "append",      "clear",       "close",       "copy",       "count",
    "decode",     "discard",     "encode",      "endswith",    "extend",     "find",
    "format",     "get",         "index",       "insert",      "items",      "join",
    "keys",       "lower",       "lstrip",      "pop",         "popitem",    "read",
    "readline",   "remove",      "replace",     "rstrip",      "setdefault", "sort",
    "split",      "splitlines",  "startswith",  "strip",       "update",     "upper",
    "values",     "write",       "rsplit",      "partition",   "seek",       "tell",
    "flush",      "fileno",      "readlines",   "writelines",  "truncate",   "open",
    "stat",       "resolve",     "exists",      "is_dir",      "is_file",    "read_text",
    "write_text", "read_bytes",  "write_bytes", "mkdir",       "iterdir",    "glob",
    "rglob",      "relative_to", "joinpath",    "with_suffix", "with_name",  "expanduser",
    "send",       "sendall",     "recv",        "settimeout",  "group",      "groups",
    "groupdict",  "span",        "find_spec",   "getheaders",  "getheader",  NULL,
};

/* Python's built-in functions and classes (the builtins module): a bare
 * call of one is not a workspace method of the same name. */
static const char *const py__builtins[] = {
    "abs",        "all",     "any",      "ascii",     "bin",          "bool",       "breakpoint",
    "bytearray",  "bytes",   "callable", "chr",       "classmethod",  "compile",    "complex",
    "delattr",    "dict",    "dir",      "divmod",    "enumerate",    "eval",       "exec",
    "filter",     "float",   "format",   "frozenset", "getattr",      "globals",    "hasattr",
    "hash",       "help",    "hex",      "id",        "input",        "int",        "isinstance",
    "issubclass", "iter",    "len",      "list",      "locals",       "map",        "max",
    "memoryview", "min",     "next",     "object",    "oct",          "open",       "ord",
    "pow",        "print",   "property", "range",     "repr",         "reversed",   "round",
    "set",        "setattr", "slice",    "sorted",    "staticmethod", "str",        "sum",
    "super",      "tuple",   "type",     "vars",      "zip",          "__import__", NULL,
};

/* pytest's and unittest's conventions; a package named test/ (Django's
 * test framework) is code, not its tests */
static const char *const py__tests[] = {"tests/", "test_*", "*_test.py", NULL};

static CrErr py__chunk(void **state, TsKeep *keep, const char *src, size_t len, uint32_t max_lines,
                       ChunkSet *out, ErrInfo *e)
{
    if (!*state) *state = idx_py_chunker_new();
    return idx_py_chunker_run(*state, keep, src, len, max_lines, out, e);
}

static void py__chunk_free(void *state)
{
    idx_py_chunker_free(state);
}

/* `cls`: a class method's class */
static const char *const py__self[] = {"self", "cls", NULL};
static const char *const py__keywords[] = {
    "and",  "as",   "assert", "break",    "class",   "continue", "def",    "del",
    "elif", "else", "except", "false",    "finally", "for",      "global", "if",
    "in",   "is",   "none",   "nonlocal", "not",     "or",       "pass",   "return",
    "self", "true", "try",    "while",    "with",    NULL};

const IdxLang idx_lang_python = {
    .graph_limits = "a method called on an object whose class is not known statically (linked only "
                    "when a single definition anywhere has that name), getattr/setattr, callbacks "
                    "passed as values, decorators' wrappers, eval/exec",
    .keywords = py__keywords,
    .self_words = py__self,
    .name = "python",
    .exts = py__exts,
    .fence = "python",
    .markers = py__markers,
    .builtin_embed = 1,
    .interps = py__interps,
    .grammar = tree_sitter_python,
    .chunk = py__chunk,
    .chunk_free = py__chunk_free,
    .module_name = idx_path_to_module,
    .pkg_files = py__pkg_files,
    .builtin_methods = py__builtin_methods,
    .builtins = py__builtins,
    .receiver_proxies = py__receiver_proxies,
    .tests = py__tests,
};
