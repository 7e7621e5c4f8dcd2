#include "base.h"

/* Calls go through the table below, not curl's type-checking macros. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define HTTP_EXCERPT 200

/* libcurl, loaded on the first request: a process that never talks to an
 * endpoint (most `coderag ask` runs) does not pay for loading it and its
 * thirty-odd dependencies. Filled once under pthread_once, read-only after. */
typedef struct CurlApi {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
    CURLcode (*easy_perform)(CURL *curl);
    CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *curl);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
    void (*slist_free_all)(struct curl_slist *list);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_add_handle)(CURLM *m, CURL *curl);
    CURLMcode (*multi_remove_handle)(CURLM *m, CURL *curl);
    CURLMcode (*multi_perform)(CURLM *m, int *running);
    CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *fds, unsigned n, int timeout_ms,
                            int *ret);
    CURLMsg *(*multi_info_read)(CURLM *m, int *left);
    CURLMcode (*multi_cleanup)(CURLM *m);
    char error[200]; /* non-empty: could not be loaded */
} CurlApi;

static pthread_once_t http__once = PTHREAD_ONCE_INIT;
static CurlApi http__curl;

static void http__load(void)
{
    static const DlSym fns[] = {
        {"curl_global_init", offsetof(CurlApi, global_init)},
        {"curl_easy_init", offsetof(CurlApi, easy_init)},
        {"curl_easy_setopt", offsetof(CurlApi, easy_setopt)},
        {"curl_easy_perform", offsetof(CurlApi, easy_perform)},
        {"curl_easy_getinfo", offsetof(CurlApi, easy_getinfo)},
        {"curl_easy_cleanup", offsetof(CurlApi, easy_cleanup)},
        {"curl_easy_strerror", offsetof(CurlApi, easy_strerror)},
        {"curl_slist_append", offsetof(CurlApi, slist_append)},
        {"curl_slist_free_all", offsetof(CurlApi, slist_free_all)},
        {"curl_multi_init", offsetof(CurlApi, multi_init)},
        {"curl_multi_add_handle", offsetof(CurlApi, multi_add_handle)},
        {"curl_multi_remove_handle", offsetof(CurlApi, multi_remove_handle)},
        {"curl_multi_perform", offsetof(CurlApi, multi_perform)},
        {"curl_multi_poll", offsetof(CurlApi, multi_poll)},
        {"curl_multi_info_read", offsetof(CurlApi, multi_info_read)},
        {"curl_multi_cleanup", offsetof(CurlApi, multi_cleanup)},
    };
    CurlApi *c = &http__curl;
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(c->error, sizeof c->error, "cannot load libcurl: %s", why ? why : "not found");
        return;
    }
    if (!dl_bind(lib, fns, sizeof fns / sizeof fns[0], c, "libcurl", c->error, sizeof c->error))
        return;
    /* a failure shows up as curl_easy_init returning NULL */
    c->global_init(CURL_GLOBAL_DEFAULT);
}

/* State of one attempt, shared with curl's callbacks. */
typedef struct HttpXfer {
    const HttpRequest *req;
    HttpResponse *out;
    const CurlApi *api;
    CURL *curl;
    size_t cap;
    size_t received;
    long retry_after_ms; /* -1: none */
    int toobig, stopped, canceled, delivered;
} HttpXfer;

static size_t http__write(char *data, size_t size, size_t nmemb, void *ud)
{
    HttpXfer *x = ud;
    size_t n = size * nmemb;
    if (n > x->cap - x->received) {
        x->toobig = 1;
        return 0;
    }
    x->received += n;
    if (x->req->on_data) {
        long status = 0;
        x->api->easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200 && status < 300) {
            x->delivered = 1;
            if (x->req->on_data(x->req->data_ud, data, n)) {
                x->stopped = 1;
                return 0;
            }
            return n;
        }
    }
    /* grow by hand: sb_grow's doubling could allocate past the cap */
    StrBuf *b = &x->out->body;
    size_t need = b->len + n + 1;
    if (need > b->cap) {
        size_t c = b->cap * 2;
        if (c < need) c = need;
        if (c > x->cap + 1) c = x->cap + 1;
        b->buf = xrealloc(b->buf, c);
        b->cap = c;
    }
    memcpy(b->buf + b->len, data, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return n;
}

static size_t http__header(char *data, size_t size, size_t nmemb, void *ud)
{
    HttpXfer *x = ud;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";
    if (n > sizeof name - 1 && strncasecmp(data, name, sizeof name - 1) == 0) {
        size_t i = sizeof name - 1;
        while (i < n && (data[i] == ' ' || data[i] == '\t'))
            i++;
        long secs = 0;
        size_t digits = 0;
        for (; i < n && data[i] >= '0' && data[i] <= '9'; i++, digits++)
            if (secs < 86400) secs = secs * 10 + (data[i] - '0');
        while (i < n && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
            i++;
        /* an HTTP-date is ignored: the exponential backoff applies */
        if (digits && i == n) x->retry_after_ms = secs * 1000;
    }
    return n;
}

static int http__progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                          curl_off_t ulnow)
{
    HttpXfer *x = ud;
    if (x->req->cancel(x->req->cancel_ud)) {
        x->canceled = 1;
        return 1;
    }
    return 0;
}

/* How often a transfer with a cancel hook polls it while idle: libcurl's
 * own progress callback may wait a second between calls. */
#define HTTP_CANCEL_POLL_MS 20

/* The transfer: with a cancel hook, through a multi handle polled every
 * HTTP_CANCEL_POLL_MS so that a cancel stops it promptly. */
static CURLcode http__perform(HttpXfer *x)
{
    const CurlApi *c = x->api;
    CURLM *m = x->req->cancel ? c->multi_init() : NULL;
    if (!m) return c->easy_perform(x->curl);
    CURLcode cc = CURLE_OK;
    int running = 1, done = 0;
    if (c->multi_add_handle(m, x->curl) != CURLM_OK) {
        c->multi_cleanup(m);
        return c->easy_perform(x->curl);
    }
    while (running) {
        if (c->multi_perform(m, &running) != CURLM_OK) {
            cc = CURLE_OUT_OF_MEMORY;
            break;
        }
        if (!running) break;
        if (x->req->cancel(x->req->cancel_ud)) {
            x->canceled = 1;
            cc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        if (c->multi_poll(m, NULL, 0, HTTP_CANCEL_POLL_MS, NULL) != CURLM_OK) {
            cc = CURLE_OUT_OF_MEMORY;
            break;
        }
    }
    CURLMsg *msg;
    int left;
    while ((msg = c->multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE) {
            cc = msg->data.result;
            done = 1;
        }
    /* A cancel heard by http__progress inside multi_perform ends the
     * transfer there (running drops to 0, done is set), one heard by the
     * loop leaves it unfinished: either way it was the caller's cancel,
     * never a finished response nor a connection the server cut. */
    if (x->canceled)
        cc = CURLE_ABORTED_BY_CALLBACK;
    else if (!done && cc == CURLE_OK)
        cc = CURLE_RECV_ERROR;
    c->multi_remove_handle(m, x->curl);
    c->multi_cleanup(m);
    return cc;
}

static void http__add_clean(StrBuf *sb, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        sb_addc(sb, c >= 0x20 && c < 0x7f ? (char)c : '?');
    }
}

/* Whether a query parameter's name looks like it carries a credential. */
static int http__secret_param(const char *name, size_t n)
{
    static const char *const words[] = {"key", "token", "pass", "pwd",     "secret",
                                        "sig", "auth",  "cred", "session", NULL};
    for (size_t w = 0; words[w]; w++) {
        size_t k = strlen(words[w]);
        for (size_t i = 0; i + k <= n; i++)
            if (!strncasecmp(name + i, words[w], k)) return 1;
    }
    return 0;
}

void http_redact_url(StrBuf *sb, const char *url)
{
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    size_t host_len = strcspn(auth, "/?#");
    const char *host = auth;
    for (size_t i = 0; i < host_len; i++)
        if (auth[i] == '@') host = auth + i + 1;
    http__add_clean(sb, url, (size_t)(auth - url));
    if (host != auth) sb_adds(sb, "***@");
    http__add_clean(sb, host, (size_t)(auth + host_len - host));
    const char *path = auth + host_len;
    size_t path_len = strcspn(path, "?#");
    http__add_clean(sb, path, path_len);
    if (path[path_len] != '?') return; /* a #fragment is never shown */
    const char *q = path + path_len + 1;
    size_t q_len = strcspn(q, "#");
    sb_addc(sb, '?');
    for (size_t i = 0; i < q_len;) {
        size_t n = strcspn(q + i, "&#");
        if (n > q_len - i) n = q_len - i;
        const char *eq = memchr(q + i, '=', n);
        size_t name_len = eq ? (size_t)(eq - (q + i)) : n;
        if (eq && http__secret_param(q + i, name_len)) {
            http__add_clean(sb, q + i, name_len + 1);
            sb_adds(sb, "***");
        } else {
            http__add_clean(sb, q + i, n);
        }
        i += n;
        if (i < q_len) {
            sb_addc(sb, '&');
            i++;
        }
    }
}

char *http_endpoint_url(const char *base, const char *endpoint)
{
    size_t n = strlen(base);
    if (n && base[n - 1] == '/') n--;
    while (*endpoint == '/')
        endpoint++;
    /* "/v1" must end the path, not be the host of "http://v1" */
    const char *sep = strstr(base, "://");
    size_t path_at = sep ? (size_t)(sep + 3 - base) : 0;
    path_at += strcspn(base + path_at, "/");
    int has_v1 = n >= 3 && n - 3 >= path_at && memcmp(base + n - 3, "/v1", 3) == 0;
    StrBuf sb;
    sb_init(&sb);
    sb_add(&sb, base, n);
    sb_adds(&sb, has_v1 ? "/" : "/v1/");
    sb_adds(&sb, endpoint);
    return sb_detach(&sb, NULL);
}

/* Overwrites, in place and at the same length, every occurrence of a header
 * value (and of each longer word of it, e.g. the key after "Bearer") so a
 * server that echoes a key cannot leak it into a message. */
static void http__mask(char *s, size_t n, const HttpRequest *req)
{
    for (size_t h = 0; h < req->n_headers; h++) {
        const char *line = req->headers[h];
        const char *colon = strchr(line, ':');
        if (!colon) continue;
        if (!strncasecmp(line, "Content-Type:", 13) || !strncasecmp(line, "Accept:", 7)) continue;
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        for (int whole = 1; *v; whole = 0) {
            size_t len = whole ? strlen(v) : strcspn(v, " \t");
            text_mask(s, n, v, len);
            if (!whole) {
                v += len;
                while (*v == ' ' || *v == '\t')
                    v++;
            }
        }
    }
}

/* Appends a one-line, ASCII-only, masked excerpt of the body. */
static void http__excerpt(StrBuf *sb, const HttpRequest *req, const StrBuf *body)
{
    size_t longest = 0;
    for (size_t h = 0; h < req->n_headers; h++) {
        size_t l = strlen(req->headers[h]);
        if (l > longest) longest = l;
    }
    size_t n = body->len < HTTP_EXCERPT + longest ? body->len : HTTP_EXCERPT + longest;
    char *tmp = xstrndup(body->buf ? body->buf : "", n);
    http__mask(tmp, n, req);
    if (!sb_add_excerpt(sb, tmp, n, HTTP_EXCERPT) && body->len > n) sb_adds(sb, "...");
    free(tmp);
}

/* splitmix64: the jitter generator, its state local to one http_post call */
static uint64_t http__rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Sleeps ms in short slices so a cancel hook is heard; 1 when canceled. */
static int http__sleep(const HttpRequest *req, long ms)
{
    double until = now_ms() + (double)ms;
    for (;;) {
        if (req->cancel && req->cancel(req->cancel_ud)) return 1;
        double left = until - now_ms();
        if (left <= 0) return 0;
        if (left > 50) left = 50;
        struct timespec ts = {0, (long)(left * 1e6)};
        nanosleep(&ts, NULL);
    }
}

static int http__retryable_code(CURLcode cc)
{
    switch (cc) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_ABORTED_BY_CALLBACK:
    case CURLE_FILESIZE_EXCEEDED:
    case CURLE_WRITE_ERROR:
    case CURLE_TOO_MANY_REDIRECTS:
        return 0;
    default:
        return 1;
    }
}

/* Runs one attempt; sets *retry when another attempt may succeed. */
static CrErr http__attempt(HttpXfer *x, const char *url_shown, char *errbuf, int *retry, ErrInfo *e)
{
    const HttpRequest *req = x->req;
    HttpResponse *out = x->out;
    sb_reset(&out->body);
    x->received = 0;
    x->retry_after_ms = -1;
    x->toobig = x->stopped = x->canceled = x->delivered = 0;
    errbuf[0] = '\0';
    *retry = 0;

    CURLcode cc = http__perform(x);
    out->status = 0;
    x->api->easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &out->status);
    const char *why = errbuf[0] ? errbuf : x->api->easy_strerror(cc);

    if (cc == CURLE_OK) {
        long st = out->status;
        if (st >= 200 && st < 300) return CR_OK;
        *retry = st == 429 || st >= 500;
        StrBuf m;
        sb_init(&m);
        sb_addf(&m, "%s returned HTTP %ld", url_shown, st);
        if (st >= 300 && st < 400) sb_adds(&m, " (redirects are not followed)");
        if (out->body.len) {
            sb_adds(&m, ": ");
            http__excerpt(&m, req, &out->body);
        }
        err_set(e, CR_EHTTP, "%s", m.buf);
        sb_release(&m);
        return CR_EHTTP;
    }
    if (x->canceled || x->stopped || cc == CURLE_ABORTED_BY_CALLBACK)
        return err_set(e, CR_ECANCELED, "%s: request canceled", url_shown);
    if (x->toobig || cc == CURLE_FILESIZE_EXCEEDED)
        return err_set(e, CR_ETOOBIG, "%s: response larger than %zu bytes", url_shown, x->cap);
    if (cc == CURLE_OPERATION_TIMEDOUT) return err_set(e, CR_ETIMEOUT, "%s: %s", url_shown, why);
    if (cc == CURLE_UNSUPPORTED_PROTOCOL || cc == CURLE_URL_MALFORMAT)
        return err_set(e, CR_EINVAL, "bad URL %s: %s", url_shown, why);
    *retry = http__retryable_code(cc) && !x->delivered;
    if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
        cc == CURLE_COULDNT_RESOLVE_PROXY)
        return err_set(e, CR_EHTTP, "%s unreachable: %s", url_shown, why);
    return err_set(e, CR_EHTTP, "%s: %s", url_shown, why);
}

/* Every option of one transfer: POST only, http(s) only, no redirects,
 * the request's timeouts and cap, our callbacks. */
static void http__configure(HttpXfer *x, struct curl_slist *hdrs, char *errbuf)
{
    const CurlApi *c = x->api;
    const HttpRequest *req = x->req;
    CURL *curl = x->curl;
    long connect_ms = req->connect_timeout_ms > 0 ? req->connect_timeout_ms : 5000;
    long total_ms = req->timeout_ms > 0 ? req->timeout_ms : 60000;
    c->easy_setopt(curl, CURLOPT_URL, req->url);
    c->easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
    c->easy_setopt(curl, CURLOPT_POST, 1L);
    c->easy_setopt(curl, CURLOPT_POSTFIELDS, req->body ? req->body : "");
    c->easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    c->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    c->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    c->easy_setopt(curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    c->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    c->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    c->easy_setopt(curl, CURLOPT_TIMEOUT_MS, total_ms);
    c->easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->cap);
    c->easy_setopt(curl, CURLOPT_USERAGENT, "coderag/0.1");
    c->easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    c->easy_setopt(curl, CURLOPT_WRITEFUNCTION, http__write);
    c->easy_setopt(curl, CURLOPT_WRITEDATA, x);
    c->easy_setopt(curl, CURLOPT_HEADERFUNCTION, http__header);
    c->easy_setopt(curl, CURLOPT_HEADERDATA, x);
    if (req->cancel) {
        c->easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, http__progress);
        c->easy_setopt(curl, CURLOPT_XFERINFODATA, x);
        c->easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    }
}

CrErr http_post(const HttpRequest *req, HttpResponse *out, ErrInfo *e)
{
    CrErr rc = CR_OK;
    CURL *curl = NULL;
    struct curl_slist *hdrs = NULL;
    char errbuf[CURL_ERROR_SIZE];
    ErrInfo le = {0};
    HttpXfer x = {0};
    StrBuf shown;

    memset(out, 0, sizeof *out);
    sb_init(&out->body);
    sb_init(&shown);
    http_redact_url(&shown, req->url ? req->url : "");
    if (!req->url || (req->body_len && !req->body)) {
        rc = err_set(e, CR_EINVAL, "http_post: no URL or body");
        goto out;
    }
    pthread_once(&http__once, http__load);
    const CurlApi *c = &http__curl;
    if (c->error[0]) {
        rc = err_set(e, CR_EHTTP, "%s", c->error);
        goto out;
    }
    for (size_t i = 0; i < req->n_headers; i++) {
        if (strpbrk(req->headers[i], "\r\n") || !strchr(req->headers[i], ':')) {
            rc = err_set(e, CR_EINVAL, "http_post: malformed header %zu", i);
            goto out;
        }
        hdrs = c->slist_append(hdrs, req->headers[i]);
        if (!hdrs) abort();
    }
    /* without this, curl waits up to a second for "100 Continue" on bodies over 1 KiB */
    hdrs = c->slist_append(hdrs, "Expect:");
    if (!hdrs) abort();

    curl = c->easy_init();
    if (!curl) {
        rc = err_set(e, CR_EHTTP, "could not initialise libcurl");
        goto out;
    }
    x.req = req;
    x.out = out;
    x.api = c;
    x.curl = curl;
    x.cap = req->max_response_bytes ? req->max_response_bytes : (size_t)16 << 20;
    http__configure(&x, hdrs, errbuf);

    long base_ms = req->retry_base_ms > 0 ? req->retry_base_ms : 200;
    long max_wait = req->retry_max_ms > 0 ? req->retry_max_ms : 10000;
    uint64_t rng = req->seed ? req->seed : (uint64_t)(now_ms() * 1e3) ^ (uint64_t)(uintptr_t)&x;
    long backoff = base_ms;
    for (int attempt = 0;; attempt++) {
        int retry;
        out->attempts++;
        rc = http__attempt(&x, shown.buf, errbuf, &retry, &le);
        if (!rc || !retry || attempt >= req->max_retries) break;
        long wait = backoff + (long)(http__rand(&rng) % (uint64_t)(backoff / 4 + 1));
        if (x.retry_after_ms >= 0) wait = x.retry_after_ms;
        if (wait > max_wait) wait = max_wait;
        backoff = backoff > max_wait / 2 ? max_wait : backoff * 2;
        log_msg(LOG_DEBUG, "http: %s; retrying in %ld ms", le.msg, wait);
        if (http__sleep(req, wait)) {
            rc = err_set(&le, CR_ECANCELED, "%s: request canceled", shown.buf);
            break;
        }
    }
    if (rc && out->attempts > 1)
        err_set(e, rc, "%s (after %d attempts)", le.msg, out->attempts);
    else if (rc)
        err_set(e, rc, "%s", le.msg);

out:
    if (curl) c->easy_cleanup(curl);
    if (hdrs) c->slist_free_all(hdrs);
    sb_release(&shown);
    return rc;
}

void http_response_release(HttpResponse *r)
{
    if (!r) return;
    sb_release(&r->body);
    r->status = 0;
    r->attempts = 0;
}

CrErr http_bearer_from_env(const char *env, const char *who, char **header, const char **key,
                           ErrInfo *e)
{
    *header = NULL;
    if (key) *key = NULL;
    if (!env || !env[0]) return CR_OK;
    const char *k = getenv(env);
    if (k && strpbrk(k, "\r\n"))
        return err_set(e, CR_EINVAL, "the API key in %s contains a line break", env);
    if (!k || !k[0]) {
        log_msg(LOG_WARN, "%s: %s is not set; sending no API key", who, env);
        return CR_OK;
    }
    StrBuf sb;
    sb_init(&sb);
    sb_addf(&sb, "Authorization: Bearer %s", k);
    *header = sb_detach(&sb, NULL);
    if (key) *key = k;
    return CR_OK;
}
