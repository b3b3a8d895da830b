/* The GPU start's delay of the installed program. */
#include "batch_run.h"

long ih_gpu_start_delay_ms(void)
{
    return IH_GPU_START_DELAY_S * 1000L;
}
