/*
 * hook_dlsym: our dlsym, in assembly so that it can reach glibc's dlsym by a tail jump.
 *
 * dlsym(RTLD_NEXT, name) searches the objects after the one that *called* dlsym, and
 * glibc finds the caller from the return address. An ordinary C wrapper would make us
 * the caller and change what RTLD_NEXT means for the program. Here xmt_dlsym_hook(handle,
 * name) decides: a non-NULL result (one of our wrappers) is returned directly; NULL means
 * "not ours", and we jump to the real dlsym with the caller's own return address still
 * on the stack and its arguments restored, exactly as if we were not here. This holds in
 * every build type (gcc 12 has no musttail, and -O0 would not tail-call anyway).
 */
    .text
    .globl  dlsym
    .type   dlsym, @function
    .p2align 4
dlsym:
    .cfi_startproc
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp                 /* keep the stack 16-byte aligned for the call */
    .cfi_adjust_cfa_offset 8
    call    xmt_dlsym_hook
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    testq   %rax, %rax
    jz      1f
    ret
1:
    jmp     *xmt_real_dlsym_ptr(%rip)
    .cfi_endproc
    .size   dlsym, .-dlsym

    .section .note.GNU-stack,"",@progbits
