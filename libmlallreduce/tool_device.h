/* tool_device.h: device memory for multilane's own tools (mlprobe).
 *
 * Not part of the public API (mlallreduce.h) and not installed: these calls
 * let a tool that links only libmlallreduce.so allocate and fill GPU memory
 * through the library's CUDA module, so that the tool itself runs unchanged
 * on nodes without CUDA.  Every function loads the module on first use. */
#ifndef MLA_TOOL_DEVICE_H_
#define MLA_TOOL_DEVICE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The number of GPUs this process sees; 0 when there is none, CUDA cannot be
 * used or this build has no CUDA module (*why, when not null, then points to
 * a sentence saying which, valid until the thread's next call).  Prints
 * nothing: the tool reports the problem. */
int mla_tool_gpu_count(const char** why);

/* Allocates `bytes` of device memory on GPU `device` (which also becomes the
 * calling thread's current device).  Returns the pointer, or null. */
void* mla_tool_device_alloc(int device, size_t bytes);

/* Frees memory from mla_tool_device_alloc; null is ignored. */
void mla_tool_device_free(void* ptr);

/* Copies `bytes` between host and device memory in either direction and
 * waits for the device.  Returns 0, or -1 on a CUDA error. */
int mla_tool_memcpy(void* dst, const void* src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* MLA_TOOL_DEVICE_H_ */
