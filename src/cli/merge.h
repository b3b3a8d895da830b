/* imghist merge: the outputs of --shard runs joined into those of one run. */
#ifndef IMGHIST_CLI_MERGE_H
#define IMGHIST_CLI_MERGE_H

/*
 * imghist merge --total OUT SHARD.csv...   adds the shards' --total CSVs
 *                                          (their bins must be the same);
 * imghist merge --csv OUT SHARD.csv...     per-image CSV records, and
 * imghist merge --json OUT SHARD.jsonl...  JSON Lines records, put in the
 *                                          order one whole run writes them
 *                                          (sorted by path).
 * argv[0] is "merge". OUT may be - (standard output); it is written whole or
 * not at all. Returns the exit status: 0, 1 (an input could not be read or is
 * not such an output), 2 (usage).
 */
int ih_merge_main(int argc, char **argv);

extern const char ih_merge_usage_text[];

#endif
