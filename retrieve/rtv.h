/*
 * rtv.h - answering a question from the index: retrieve candidate chunks
 * (BM25 now; dense vectors and graph expansion later), pack the best of them
 * into a character budget, write an answer that cites them (extractive now;
 * an LLM later) and verify its citations.
 */
#ifndef CODERAG_RTV_H
#define CODERAG_RTV_H

#include "base.h"
#include "idx.h"
#include "vfy.h"

#include <stddef.h>
#include <stdint.h>

/* Longest question accepted, in bytes. */
#define RTV_MAX_QUESTION 8192
/* Packed-context budget in characters (code points) when the request says 0. */
#define RTV_DEFAULT_BUDGET 12000
/* Candidates taken from each retriever, and the most items packed. */
#define RTV_MAX_CANDIDATES 50

typedef enum { RTV_MODE_AUTO, RTV_MODE_EXTRACTIVE, RTV_MODE_LLM } RtvMode;

typedef struct RtvRequest {
    const char *question;               /* required; at most RTV_MAX_QUESTION bytes */
    size_t budget;                      /* characters of packed context; 0: RTV_DEFAULT_BUDGET */
    int use_bm25, use_dense, use_graph; /* ablation switches; all 1 by default */
    RtvMode mode;                       /* default RTV_MODE_AUTO */
    const char *llm_url;                /* OpenAI-compatible base URL; NULL: no LLM configured */
} RtvRequest;

/* Fills r with the defaults (no question, default budget, every retriever
 * on, mode auto, no LLM). */
void rtv_request_init(RtvRequest *r);

/* Which retrievers proposed an item (bit set). */
typedef enum { RTV_VIA_BM25 = 1, RTV_VIA_DENSE = 2, RTV_VIA_GRAPH = 4 } RtvVia;

/* One packed context item. */
typedef struct RtvItem {
    IdxChunk chunk;                /* the chunk it came from; owned */
    uint32_t start_line, end_line; /* packed span, 1-based inclusive (the chunk's, for now) */
    double score; /* fused relevance, best item 1.0 (BM25 relative to the top hit) */
    unsigned via; /* RtvVia bits */
    char *text;   /* the packed lines as read at packing time; owned */
} RtvItem;

typedef struct RtvTimings {
    double bm25_ms, dense_ms, graph_ms, pack_ms, llm_ms, verify_ms, total_ms;
} RtvTimings;

typedef struct RtvAnswer {
    char *answer;   /* markdown with "[path:a-b]" citations; owned */
    RtvMode mode;   /* the mode used: EXTRACTIVE or LLM */
    RtvItem *items; /* the packed context, best first */
    size_t n_items;
    VfyCitation *citations; /* verified citations, in order of appearance */
    size_t n_citations;
    VfyRejected *rejected; /* citations that failed a check */
    size_t n_rejected;
    RtvTimings timings;
} RtvAnswer;

/* Answers req over the store: BM25 candidates (the dense and graph switches
 * add nothing yet), packed best first into the budget, then an answer. In
 * extractive mode, and in auto (which logs a warning and stays extractive
 * when llm_url is set, until the LLM client exists), the answer lists the
 * packed items grouped by file, each cited, and the citations come out
 * verified with source "auto". Release *out with
 * rtv_answer_release, also after a failure (it is then empty).
 * Errors: CR_EINVAL (no or blank question), CR_ETOOBIG (question too long),
 * CR_EHTTP (mode llm: no LLM configured, or the LLM client is not available),
 * and the store's errors (CR_EDB, CR_EIO). */
CrErr rtv_ask(IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e);
void rtv_answer_release(RtvAnswer *a);

/* The name an item is known by: the chunk's symbol, or its module's dotted
 * name for module-level code. Borrowed from the item. */
const char *rtv_item_symbol(const RtvItem *it);

/* "auto", "extractive", "llm". Static. */
const char *rtv_mode_name(RtvMode m);
/* Parses those names; returns 1 on success, 0 (leaving *out) otherwise. */
int rtv_mode_parse(const char *s, RtvMode *out);

#endif
