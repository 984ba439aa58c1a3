/*
 * policies: the loaded policy set (see policies.h).
 */
#include "policies.h"

xmt_policy_set *xmt_policies;
