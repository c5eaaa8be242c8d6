/** Linux errno values the maps and helpers return, negated, as the kernel does. */
export const Errno = {
  EPERM: 1,
  ENOENT: 2,
  E2BIG: 7,
  EAGAIN: 11,
  ENOMEM: 12,
  EFAULT: 14,
  EBUSY: 16,
  EEXIST: 17,
  EINVAL: 22,
  ENOSPC: 28,
  EOPNOTSUPP: 95,
} as const;
export type Errno = (typeof Errno)[keyof typeof Errno];

/** `BPF_ANY`, `BPF_NOEXIST`, `BPF_EXIST`: the flags of a map update. */
export const UpdateFlag = { any: 0, noExist: 1, exist: 2 } as const;
export type UpdateFlag = (typeof UpdateFlag)[keyof typeof UpdateFlag];
