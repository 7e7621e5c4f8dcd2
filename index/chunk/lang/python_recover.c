/* python_recover.c - where to re-parse after a syntax error swallowed
 * the rest of a Python file. */
#include "python_int.h"

/* ---------------------------------------------------------------- error recovery */

static TSNode chunk__first_error(ChunkRun *r, TSNode n)
{
    TSTreeCursor *c = &r->aux;
    for (;;) {
        if (ts_node_symbol(n) == CHUNK__SYM_ERROR || ts_node_is_missing(n)) return n;
        int found = 0;
        ts_tree_cursor_reset(c, n);
        if (ts_tree_cursor_goto_first_child(c)) {
            do {
                TSNode ch = ts_tree_cursor_current_node(c);
                if (ts_node_has_error(ch)) {
                    n = ch;
                    found = 1;
                    break;
                }
            } while (ts_tree_cursor_goto_next_sibling(c));
        }
        if (!found) return n;
    }
}

static int chunk__starts_def(const char *p, const char *end)
{
    size_t n = (size_t)(end - p);
    if (n >= 2 && p[0] == '@' && p[1] != ' ' && p[1] != '\t') return 1;
    if (n >= 6 && !memcmp(p, "async", 5) && (p[5] == ' ' || p[5] == '\t')) {
        p += 6;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        n = (size_t)(end - p);
    }
    if (n >= 4 && !memcmp(p, "def", 3) && (p[3] == ' ' || p[3] == '\t')) return 1;
    if (n >= 6 && !memcmp(p, "class", 5) && (p[5] == ' ' || p[5] == '\t')) return 1;
    return 0;
}

/* After a syntax error tree-sitter often swallows the rest of the file into
 * an ERROR node or a broken statement. Returns the first line after the error
 * that opens a definition at column 0 which the tree does not show as a sound
 * top-level node, so the caller re-parses from there; 0 for none. */
uint32_t idx_py_find_cut(ChunkRun *r, TSNode root, uint32_t seg_line)
{
    const ChunkSyms *sy = r->sy;
    uint32_t e = ts_node_start_byte(chunk__first_error(r, root));
    if (e >= r->len) return 0;
    uint32_t el = idx_emit_line_of(&r->em, e);
    uint32_t l = r->line_start[el] == e ? el : el + 1;
    if (l <= seg_line) l = seg_line + 1;
    TSTreeCursor *c = &r->aux;
    ts_tree_cursor_reset(c, root);
    int has_child = ts_tree_cursor_goto_first_child(c);
    for (; l <= r->n_lines; l++) {
        uint32_t b = r->line_start[l];
        if (r->line_kind[l] != CHUNK__CODE ||
            !chunk__starts_def(r->src + b, r->src + r->line_start[l + 1]))
            continue;
        while (has_child && ts_node_end_byte(ts_tree_cursor_current_node(c)) <= b)
            has_child = ts_tree_cursor_goto_next_sibling(c);
        if (!has_child) return l;
        TSNode ch = ts_tree_cursor_current_node(c);
        TSSymbol s = ts_node_symbol(ch);
        if (ts_node_start_byte(ch) > b) return l;
        if (ts_node_start_byte(ch) == b &&
            (s == sy->function_definition || s == sy->class_definition ||
             s == sy->decorated_definition))
            continue;
        /* a sound node (a string holding "def", say) stays; a loose keyword
         * or a decorator outside any definition means the tree is lost here */
        if (ts_node_is_named(ch) && !ts_node_has_error(ch) && s != sy->decorator) continue;
        return l;
    }
    return 0;
}
