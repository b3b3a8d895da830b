#define _POSIX_C_SOURCE 200809L
#include "merge.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "outputs.h"

const char ih_merge_usage_text[] =
    "Usage: imghist merge --total|--csv|--json OUT SHARD...\n"
    "\n"
    "Joins the outputs of runs over shards (imghist --shard K/N) into what one\n"
    "run over everything writes:\n"
    "  --total OUT   adds the shards' --total CSVs (bin,lower,upper,count; their\n"
    "                bins must be the same; the empty file of a shard that got\n"
    "                no image adds nothing)\n"
    "  --csv OUT     the shards' per-image CSVs (file,bin,lower,upper,count), the\n"
    "                images in sorted path order as one run writes them\n"
    "  --json OUT    the shards' JSON Lines, likewise\n"
    "OUT may be - (standard output); it is written whole or not at all. A shard\n"
    "given twice (the same file, or two files with the same records) and a\n"
    "per-image CSV given to --total are refused.\n"
    "\n"
    "Example:\n"
    "  for k in 1 2 3; do imghist -r --shard $k/3 --total t$k.csv photos/; done\n"
    "  imghist merge --total total.csv t1.csv t2.csv t3.csv\n"
    "\n"
    "Exit status: 0 success, 1 an input could not be read or is not such an\n"
    "output, 2 usage error.\n";

enum mode { NONE, TOTAL, CSV, JSON };

/* A line of an input (without its newline); NULL at the end or on an error
 * (errno then set; ferror). */
typedef struct input {
    const char *path;
    FILE *fp;
    char *line;
    size_t cap;
    long lineno;
} input;

static ssize_t next_line(input *in)
{
    errno = 0;
    ssize_t n = getline(&in->line, &in->cap, in->fp);
    if (n < 0) {
        return -1;
    }
    in->lineno++;
    if (n > 0 && in->line[n - 1] == '\n') {
        in->line[--n] = '\0';
    }
    return n;
}

static int bad(const input *in, const char *what)
{
    ih_say("%s:%ld: %s", in->path, in->lineno, what);
    return -1;
}

static int read_error(const input *in)
{
    ih_say("%s: cannot read: %s", in->path, strerror(errno ? errno : EIO));
    return -1;
}

/* A count: decimal digits only, within 64 bits. */
static int parse_count(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (*s == '\0') return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        const uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* ---- --total: bins must agree, counts add ---- */

typedef struct total_row {
    char *bin; /* "bin,lower,upper" as written */
    uint64_t count;
} total_row;

static int merge_total(input *ins, size_t n, FILE *out)
{
    total_row *rows = NULL;
    size_t n_rows = 0, cap = 0;
    char *header = NULL;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        input *in = &ins[k];
        if (next_line(in) < 0) {
            if (ferror(in->fp)) {
                rc = read_error(in);
            }
            continue; /* a shard that got no image writes an empty --total */
        }
        const int first = header == NULL;
        if (strncmp(in->line, "file,", 5) == 0) {
            /* Its rows would be copied through as a total. */
            rc = bad(in, "a per-image CSV (imghist --csv), not a --total CSV: merge it with "
                         "--csv");
            break;
        }
        if (first) {
            const size_t len = strlen(in->line);
            if (len < 6 || strcmp(in->line + len - 6, ",count") != 0 ||
                (header = strdup(in->line)) == NULL) {
                rc = bad(in, "not a --total CSV (its header does not end with ,count)");
                break;
            }
        } else if (strcmp(in->line, header) != 0) {
            rc = bad(in, "its header differs from the first input's");
            break;
        }
        size_t r = 0;
        while (rc == 0 && next_line(in) >= 0) {
            char *comma = strrchr(in->line, ',');
            uint64_t c = 0;
            if (comma == NULL || parse_count(comma + 1, &c) != 0) {
                rc = bad(in, "not a row of a --total CSV");
                break;
            }
            *comma = '\0';
            if (first) {
                if (n_rows == cap) {
                    cap = cap ? 2 * cap : 256;
                    total_row *more = realloc(rows, cap * sizeof *rows);
                    if (more == NULL) {
                        rc = bad(in, "out of memory");
                        break;
                    }
                    rows = more;
                }
                rows[n_rows].bin = strdup(in->line);
                rows[n_rows].count = c;
                if (rows[n_rows++].bin == NULL) {
                    rc = bad(in, "out of memory");
                }
            } else if (r >= n_rows || strcmp(rows[r].bin, in->line) != 0) {
                rc = bad(in, "its bins differ from the first input's");
            } else if (rows[r].count > UINT64_MAX - c) {
                rc = bad(in, "the sum of the counts overflows 64 bits");
            } else {
                rows[r].count += c;
            }
            r++;
        }
        if (rc == 0 && ferror(in->fp)) {
            rc = read_error(in);
        }
        if (rc == 0 && !first && r != n_rows) {
            rc = bad(in, "it has fewer bins than the first input");
        }
    }
    if (rc == 0 && header == NULL) {
        ih_say("merge: every input is empty: no shard counted an image");
        rc = -1;
    }
    if (rc == 0) {
        fprintf(out, "%s\n", header);
        for (size_t r = 0; r < n_rows; r++) {
            fprintf(out, "%s,%llu\n", rows[r].bin, (unsigned long long)rows[r].count);
        }
    }
    for (size_t r = 0; r < n_rows; r++) free(rows[r].bin);
    free(rows);
    free(header);
    return rc;
}

/* ---- --csv and --json: records merged by path ---- */

/* One image's records of an input: its path (the key) and its text. */
typedef struct source {
    input in;
    enum mode mode;
    int have_row;     /* in.line holds the next CSV row, read ahead */
    char *key, *text; /* the current image: NULL at the end */
    size_t key_cap, text_len, text_cap;
    char *prev;       /* the key before, for the order check */
} source;

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n + 1) c *= 2;
        char *more = realloc(*buf, c);
        if (more == NULL) return -1;
        *buf = more;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

/* A CSV row can span lines where a quoted field holds a line break: reads
 * on while the quotes are open. Returns 0, 1 at the end, -1 on an error. */
static int csv_row(source *s)
{
    input *in = &s->in;
    if (next_line(in) < 0) {
        return ferror(in->fp) ? read_error(in) : 1;
    }
    for (;;) {
        size_t quotes = 0;
        for (const char *p = in->line; *p; p++) quotes += *p == '"';
        if (quotes % 2 == 0) return 0;
        /* line + "\n" + the next line */
        char *joined = NULL;
        size_t len = 0, cap = 0;
        if (append(&joined, &len, &cap, in->line, strlen(in->line)) || append(&joined, &len, &cap, "\n", 1)) {
            free(joined);
            return bad(in, "out of memory");
        }
        if (next_line(in) < 0) {
            free(joined);
            return ferror(in->fp) ? read_error(in) : bad(in, "a quoted field is not closed");
        }
        if (append(&joined, &len, &cap, in->line, strlen(in->line))) {
            free(joined);
            return bad(in, "out of memory");
        }
        free(in->line);
        in->line = joined;
        in->cap = cap;
    }
}

/* The first CSV field of row, unquoted, into key. */
static int csv_key(const char *row, char **key, size_t *cap)
{
    size_t len = 0;
    if (*key) (*key)[0] = '\0';
    if (row[0] != '"') {
        const char *comma = strchr(row, ',');
        return comma == NULL ? -1 : append(key, &len, cap, row, (size_t)(comma - row));
    }
    for (const char *p = row + 1; *p; p++) {
        if (*p == '"') {
            if (p[1] == '"') {
                if (append(key, &len, cap, "\"", 1)) return -1;
                p++;
            } else {
                return p[1] == ',' ? 0 : -1;
            }
        } else if (append(key, &len, cap, p, 1)) {
            return -1;
        }
    }
    return -1;
}

/* The "file" string of a JSON Lines record as written by imghist, unescaped. */
static int json_key(const char *line, char **key, size_t *cap)
{
    static const char head[] = "{\"file\": \"";
    size_t len = 0;
    if (strncmp(line, head, sizeof head - 1) != 0) return -1;
    if (append(key, &len, cap, "", 0)) return -1;
    for (const char *p = line + sizeof head - 1; *p; p++) {
        char c = *p;
        if (c == '"') return 0;
        if (c == '\\') {
            c = *++p;
            if (c == 'u') {
                unsigned v = 0;
                for (int i = 1; i <= 4; i++) {
                    const char h = p[i];
                    if (h >= '0' && h <= '9') v = v * 16 + (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f') v = v * 16 + (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') v = v * 16 + (unsigned)(h - 'A' + 10);
                    else return -1;
                }
                if (v == 0 || v > 0xff) return -1; /* imghist escapes bytes only */
                p += 4;
                c = (char)v;
            } else if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c == 'r') c = '\r';
            else if (c == 'b') c = '\b';
            else if (c == 'f') c = '\f';
            else if (c != '"' && c != '\\' && c != '/') return -1;
        }
        if (append(key, &len, cap, &c, 1)) return -1;
    }
    return -1;
}

/* The next image of s into key and text; key NULL at the end. 0 or -1. */
static int next_image(source *s)
{
    s->text_len = 0;
    if (s->key != NULL) {
        free(s->prev);
        s->prev = strdup(s->key);
        if (s->prev == NULL) return bad(&s->in, "out of memory");
    }
    if (s->mode == JSON) {
        ssize_t n;
        do {
            n = next_line(&s->in);
        } while (n == 0); /* blank lines carry no record */
        if (n < 0) {
            if (ferror(s->in.fp)) return read_error(&s->in);
            free(s->key);
            s->key = NULL;
            return 0;
        }
        if (json_key(s->in.line, &s->key, &s->key_cap) != 0) {
            return bad(&s->in, "not a JSON Lines record of imghist (it must begin {\"file\": \"...\")");
        }
        if (append(&s->text, &s->text_len, &s->text_cap, s->in.line, (size_t)n) ||
            append(&s->text, &s->text_len, &s->text_cap, "\n", 1)) {
            return bad(&s->in, "out of memory");
        }
    } else {
        if (!s->have_row) {
            const int r = csv_row(s);
            if (r < 0) return -1;
            if (r > 0) {
                free(s->key);
                s->key = NULL;
                return 0;
            }
        }
        if (csv_key(s->in.line, &s->key, &s->key_cap) != 0) {
            return bad(&s->in, "not a row of a per-image CSV (file,bin,lower,upper,count)");
        }
        /* This row and those after it with the same file. */
        char *key2 = NULL;
        size_t cap2 = 0;
        for (;;) {
            if (append(&s->text, &s->text_len, &s->text_cap, s->in.line, strlen(s->in.line)) ||
                append(&s->text, &s->text_len, &s->text_cap, "\n", 1)) {
                free(key2);
                return bad(&s->in, "out of memory");
            }
            const int r = csv_row(s);
            if (r < 0) {
                free(key2);
                return -1;
            }
            if (r > 0) {
                s->have_row = 0;
                break;
            }
            if (csv_key(s->in.line, &key2, &cap2) != 0) {
                free(key2);
                return bad(&s->in, "not a row of a per-image CSV (file,bin,lower,upper,count)");
            }
            if (strcmp(key2, s->key) != 0) {
                s->have_row = 1;
                break;
            }
        }
        free(key2);
    }
    if (s->prev != NULL && strcmp(s->prev, s->key) >= 0) {
        return bad(&s->in, "its images are not in sorted order (not an imghist output?)");
    }
    return 0;
}

static int merge_records(source *srcs, size_t n, enum mode mode, FILE *out)
{
    char *header = NULL;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        source *s = &srcs[k];
        s->mode = mode;
        if (mode == CSV) {
            if (next_line(&s->in) < 0) {
                rc = ferror(s->in.fp) ? read_error(&s->in)
                                      : bad(&s->in, "empty: not a per-image CSV");
            } else if (strncmp(s->in.line, "file,", 5) != 0) {
                rc = bad(&s->in, "not a per-image CSV (its header does not begin file,)");
            } else if (k == 0 && (header = strdup(s->in.line)) == NULL) {
                rc = bad(&s->in, "out of memory");
            } else if (k > 0 && strcmp(header, s->in.line) != 0) {
                rc = bad(&s->in, "its header differs from the first input's");
            }
        }
        if (rc == 0) rc = next_image(s);
    }
    if (rc == 0 && header != NULL) {
        fprintf(out, "%s\n", header);
    }
    while (rc == 0) {
        source *min = NULL;
        for (size_t k = 0; k < n; k++) {
            if (srcs[k].key == NULL) continue;
            if (min == NULL) {
                min = &srcs[k];
                continue;
            }
            const int c = strcmp(srcs[k].key, min->key);
            if (c == 0) {
                ih_say("%s and %s both hold records of %s: shards of one run share no image",
                       min->in.path, srcs[k].in.path, min->key);
                rc = -1;
                break;
            }
            if (c < 0) min = &srcs[k];
        }
        if (rc != 0 || min == NULL) break;
        fwrite(min->text, 1, min->text_len, out);
        rc = next_image(min);
    }
    free(header);
    return rc;
}

/* A file's bytes hashed (FNV-1a) and its line count; the file is rewound. */
static int fingerprint(FILE *fp, uint64_t *hash, uint64_t *lines)
{
    uint64_t h = 14695981039346656037ull, n = 0;
    for (int c; (c = getc(fp)) != EOF;) {
        h = (h ^ (uint64_t)(unsigned char)c) * 1099511628211ull;
        n += c == '\n';
    }
    *hash = h;
    *lines = n;
    const int bad_read = ferror(fp);
    rewind(fp);
    return bad_read ? -1 : 0;
}

/* Whether two open files hold the same bytes; both are rewound. */
static int same_bytes(FILE *a, FILE *b)
{
    int ca, cb;
    do {
        ca = getc(a);
        cb = getc(b);
    } while (ca == cb && ca != EOF);
    rewind(a);
    rewind(b);
    return ca == cb;
}

/* Shards of one run hold different images: two inputs with the same records
 * (beyond a header) are one shard given twice under two names. 0, or -1
 * after saying which. */
static int refuse_same_content(source *srcs, size_t n, enum mode mode)
{
    const uint64_t header_lines = mode == JSON ? 0 : 1;
    uint64_t *hash = calloc(n ? 2 * n : 1, sizeof *hash);
    if (hash == NULL) {
        ih_say("out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        if (fingerprint(srcs[k].in.fp, &hash[2 * k], &hash[2 * k + 1]) != 0) {
            rc = read_error(&srcs[k].in);
        }
        for (size_t j = 0; j < k && rc == 0; j++) {
            if (hash[2 * j] == hash[2 * k] && hash[2 * k + 1] > header_lines &&
                hash[2 * j + 1] == hash[2 * k + 1] && same_bytes(srcs[j].in.fp, srcs[k].in.fp)) {
                ih_say("merge: %s and %s hold the same records: one shard given twice? (the "
                       "shards of a run hold different images)", srcs[j].in.path,
                       srcs[k].in.path);
                rc = -1;
            }
        }
    }
    free(hash);
    return rc;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return strcmp(a, "-") != 0 && strcmp(b, "-") != 0 && stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* What imghist merge was asked. */
typedef struct merge_args {
    enum mode mode;
    const char *out_path;
    const char **paths; /* the inputs (argc entries) */
    size_t n;
} merge_args;

/* Reads merge's arguments into m; -1 to go on, or the exit status (after
 * --help or a usage error). */
static int parse_merge(int argc, char **argv, merge_args *m)
{
    enum mode mode = NONE;
    const char *out_path = NULL;
    const char **paths = m->paths;
    size_t n = 0;
    int no_more = 0;
    static const char *const names[] = {"", "--total", "--csv", "--json"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (no_more || a[0] != '-' || strcmp(a, "-") == 0) {
            paths[n++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            no_more = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(ih_merge_usage_text, stdout);
            return IH_EXIT_OK;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0 || strcmp(a, "-v") == 0 ||
            strcmp(a, "--verbose") == 0) {
            continue; /* merge says nothing but errors either way */
        }
        enum mode mk = NONE;
        size_t len = 0;
        for (int k = TOTAL; k <= JSON; k++) {
            len = strlen(names[k]);
            if (strncmp(a, names[k], len) == 0 && (a[len] == '\0' || a[len] == '=')) {
                mk = (enum mode)k;
                break;
            }
        }
        if (mk == NONE) {
            ih_say("merge: unknown option '%s' (see imghist merge --help)", a);
            return IH_EXIT_USAGE;
        }
        if (mode != NONE) {
            ih_say("merge: one of --total, --csv, --json at a time (see imghist merge --help)");
            return IH_EXIT_USAGE;
        }
        mode = mk;
        out_path = a[len] == '=' ? a + len + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (out_path == NULL || out_path[0] == '\0') {
            ih_say("merge: option %s needs a value (see imghist merge --help)", names[mk]);
            return IH_EXIT_USAGE;
        }
    }
    const char *usage = NULL;
    if (mode == NONE) {
        usage = "merge: say what to merge: --total, --csv or --json OUT";
    } else if (n == 0) {
        usage = "merge: no input files given";
    }
    for (size_t k = 0; k < n && usage == NULL; k++) {
        if (strcmp(paths[k], "-") == 0) {
            usage = "merge: inputs are files (not - )";
        } else if (same_file(paths[k], out_path)) {
            ih_say("merge: %s: refusing to overwrite an input", out_path);
            return IH_EXIT_USAGE;
        }
        for (size_t j = 0; j < k; j++) {
            if (strcmp(paths[j], paths[k]) == 0 || same_file(paths[j], paths[k])) {
                /* Its counts or records would be added twice. */
                ih_say("merge: %s and %s are the same file: give each shard once (see imghist "
                       "merge --help)", paths[j], paths[k]);
                return IH_EXIT_USAGE;
            }
        }
    }
    if (usage != NULL) {
        ih_say("%s (see imghist merge --help)", usage);
        return IH_EXIT_USAGE;
    }
    m->mode = mode;
    m->out_path = out_path;
    m->n = n;
    return -1;
}

int ih_merge_main(int argc, char **argv)
{
    merge_args m = {NONE, NULL, calloc(argc > 0 ? (size_t)argc : 1, sizeof *m.paths), 0};
    if (m.paths == NULL) {
        ih_say("out of memory");
        return IH_EXIT_FILE;
    }
    const int done = parse_merge(argc, argv, &m);
    if (done >= 0) {
        free(m.paths);
        return done;
    }
    const enum mode mode = m.mode;
    const char *out_path = m.out_path;
    const char **paths = m.paths;
    const size_t n = m.n;

    source *srcs = calloc(n, sizeof *srcs);
    int rc = srcs == NULL ? -1 : 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        srcs[k].in.path = paths[k];
        if ((srcs[k].in.fp = fopen(paths[k], "rb")) == NULL) {
            ih_say("%s: cannot open: %s", paths[k], strerror(errno));
            rc = -1;
        }
    }
    if (rc == 0) {
        rc = refuse_same_content(srcs, n, mode);
    }
    ih_outputs outs = {0};
    char err[1200];
    FILE *out = NULL;
    if (rc == 0 && (out = ih_outputs_open(&outs, out_path, err, sizeof err)) == NULL) {
        ih_say("%s", err);
        rc = -1;
    }
    if (rc == 0) {
        if (mode == TOTAL) {
            input *ins = malloc(n * sizeof *ins);
            if (ins == NULL) {
                rc = -1;
            } else {
                for (size_t k = 0; k < n; k++) ins[k] = srcs[k].in;
                rc = merge_total(ins, n, out);
                for (size_t k = 0; k < n; k++) srcs[k].in = ins[k]; /* buffers to free */
                free(ins);
            }
        } else {
            rc = merge_records(srcs, n, mode, out);
        }
    }
    if (rc == 0 && ferror(out)) {
        ih_say("%s: cannot write: %s", out_path, strerror(errno ? errno : EIO));
        rc = -1;
    }
    if (rc == 0 && ih_outputs_commit(&outs, err, sizeof err) != 0) {
        ih_say("%s", err);
        rc = -1;
    }
    if (rc != 0) {
        ih_outputs_abort(&outs);
    }
    for (size_t k = 0; srcs != NULL && k < n; k++) {
        if (srcs[k].in.fp) fclose(srcs[k].in.fp);
        free(srcs[k].in.line);
        free(srcs[k].key);
        free(srcs[k].text);
        free(srcs[k].prev);
    }
    free(srcs);
    free(paths);
    return rc == 0 ? IH_EXIT_OK : IH_EXIT_FILE;
}
