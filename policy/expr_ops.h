/* expr_ops.h - the opcodes of the expressions' postfix code (xmt_insn.op): expr.c emits
 * them, eval.c runs them. Private to those two. */
#ifndef XMT_EXPR_OPS_H
#define XMT_EXPR_OPS_H

/* The leaves first, OP_CI to OP_ATTR: xmt_code_eval tells a one-leaf expression by that. */
enum {
    OP_CI,
    OP_CF,
    OP_PARAM,
    OP_FIELD,
    OP_SPACE,
    OP_ORIG,
    OP_ATTR,
    OP_NEG,
    OP_NOT,
    OP_BOOL,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_MOD,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_EQ,
    OP_NE,
    OP_ANDJ, /* pop; if false push 0 and jump */
    OP_ORJ,  /* pop; if true push 1 and jump */
    OP_JF,   /* pop; if false jump */
    OP_JMP,
    OP_CDIV,
    OP_MIN,
    OP_MAX,
    OP_NP2,
    OP_LOG2,
    OP_ABS,
    OP_INTLIKE,
};

#endif
