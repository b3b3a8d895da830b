/* imghist compare and imghist similar: histograms of images (or the CSVs the
 * CLI writes) compared with OpenCV's compareHist methods. */
#ifndef IMGHIST_CLI_COMPARE_H
#define IMGHIST_CLI_COMPARE_H

/*
 * imghist compare REF INPUT... [options]   each input's d(REF, INPUT);
 * imghist similar DIR... --threshold T     the pairs of a folder's images
 *                                          within T of each other.
 * argv[0] is "compare" or "similar". Returns the exit status: 0, 1 (an input
 * could not be read or compared), 2 (usage).
 */
int ih_compare_main(int argc, char **argv);
int ih_similar_main(int argc, char **argv);

extern const char ih_compare_usage_text[];
extern const char ih_similar_usage_text[];

#endif
