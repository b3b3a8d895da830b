/* The GPU start's delay of imghist-test, the program the tests run where
 * they need another one: IMGHIST_TEST_GPU_START_DELAY_MS (0: CUDA starts at
 * once, so that a short run ends while it is starting). */
#include <stdlib.h>

#include "batch_run.h"

long ih_gpu_start_delay_ms(void)
{
    const char *env = getenv("IMGHIST_TEST_GPU_START_DELAY_MS");
    if (env != NULL && *env >= '0' && *env <= '9') {
        return strtol(env, NULL, 10) % 100000;
    }
    return IH_GPU_START_DELAY_S * 1000L;
}
