/* The verification kernels' PTX text (kernels.ptx, generated from kernels.cu), carried
 * in the library as a NUL-terminated string for cuModuleLoadData. */
    .section .rodata
    .globl xmt_gpucheck_ptx
    .hidden xmt_gpucheck_ptx
    .type xmt_gpucheck_ptx, @object
    .balign 16
xmt_gpucheck_ptx:
    .incbin XMT_PTX_PATH
    .byte 0
    .size xmt_gpucheck_ptx, . - xmt_gpucheck_ptx
    .section .note.GNU-stack,"",@progbits
