// bpftrace one-liners (BEGIN blocks), the same calls on the test model, and what bpftrace 0.17
// prints for them (after its `Attaching 1 probe...` line and two blank lines), captured on this
// machine with `bpftrace -e 'BEGIN { ...; exit(); }'`. test/bpftrace-live.test.ts checks the
// text against the installed bpftrace again. (bpftrace 0.17's hist() puts every value of 2^32 and
// more in [2G, 4G): a limit of its bucketing, not of its drawing, so the cases stay below 2^32.)
import type { BpftraceModel } from './bpftrace-model.js';

export interface BpftraceCase {
  name: string;
  script: string;
  build(m: BpftraceModel): void;
  printed: string;
}

const bar = (n: number) => `|${'@'.repeat(n).padEnd(52)}|`;

export const bpftraceCases: BpftraceCase[] = [
  {
    name: 'counts sorted by value, sums, scalars, averages, stats and histograms in name order',
    script:
      '@c["a"] = count(); @c["bb"] = count(); @c["bb"] = count(); @c["cc"] = count(); @c["cc"] = count(); @c["cc"] = count(); @h = hist(0); @h = hist(1); @h = hist(5); @h = hist(1500); @a = avg(10); @a = avg(21); @s = stats(3); @s = stats(9); @x = 5; @m[1, "x"] = hist(100); @m[2, "y"] = hist(3000); @sum = sum(123); @big = hist(3000000000); @big = hist(1048576); @ak[1] = avg(3); @ak[2] = avg(100); @sk[7] = stats(5);',
    build(m) {
      m.count('c', ['a']);
      m.count('c', ['bb']);
      m.count('c', ['bb']);
      for (let i = 0; i < 3; i++) m.count('c', ['cc']);
      for (const v of [0, 1, 5, 1500]) m.hist('h', v);
      m.avg('a', 10);
      m.avg('a', 21);
      m.stats('s', 3);
      m.stats('s', 9);
      m.set('x', 5);
      m.hist('m', 100, [1, 'x']);
      m.hist('m', 3000, [2, 'y']);
      m.sum('sum', 123);
      m.hist('big', 3000000000);
      m.hist('big', 1048576);
      m.avg('ak', 3, [1]);
      m.avg('ak', 100, [2]);
      m.stats('sk', 5, [7]);
    },
    printed: `@a: 15

@ak[1]: 3
@ak[2]: 100

@big: 
[1M, 2M)               1 ${bar(52)}
[2M, 4M)               0 ${bar(0)}
[4M, 8M)               0 ${bar(0)}
[8M, 16M)              0 ${bar(0)}
[16M, 32M)             0 ${bar(0)}
[32M, 64M)             0 ${bar(0)}
[64M, 128M)            0 ${bar(0)}
[128M, 256M)           0 ${bar(0)}
[256M, 512M)           0 ${bar(0)}
[512M, 1G)             0 ${bar(0)}
[1G, 2G)               0 ${bar(0)}
[2G, 4G)               1 ${bar(52)}

@c[a]: 1
@c[bb]: 2
@c[cc]: 3
@h: 
[0]                    1 ${bar(52)}
[1]                    1 ${bar(52)}
[2, 4)                 0 ${bar(0)}
[4, 8)                 1 ${bar(52)}
[8, 16)                0 ${bar(0)}
[16, 32)               0 ${bar(0)}
[32, 64)               0 ${bar(0)}
[64, 128)              0 ${bar(0)}
[128, 256)             0 ${bar(0)}
[256, 512)             0 ${bar(0)}
[512, 1K)              0 ${bar(0)}
[1K, 2K)               1 ${bar(52)}

@m[1, x]: 
[64, 128)              1 ${bar(52)}

@m[2, y]: 
[2K, 4K)               1 ${bar(52)}

@s: count 2, average 6, total 12

@sk[7]: count 1, average 5, total 5

@sum: 123
@x: 5
`,
  },
  {
    name: 'averages sorted by value, histograms by key, linear histograms, negative sums',
    script:
      '@ak[1] = avg(300); @ak[2] = avg(100); @ak[3] = avg(200); @l = lhist(2000, 0, 5000, 1000); @l = lhist(4500, 0, 5000, 1000); @mk[3, "b"] = count(); @mk[1, "zz"] = count(); @mk[1, "zz"] = count(); @hk[5] = hist(3); @hk[2] = hist(3); @hk[10] = hist(40); @neg = avg(-7); @su[2] = sum(-5); @su[1] = sum(5);',
    build(m) {
      m.avg('ak', 300, [1]);
      m.avg('ak', 100, [2]);
      m.avg('ak', 200, [3]);
      m.lhist('l', 2000, 0, 5000, 1000);
      m.lhist('l', 4500, 0, 5000, 1000);
      m.count('mk', [3, 'b']);
      m.count('mk', [1, 'zz']);
      m.count('mk', [1, 'zz']);
      m.hist('hk', 3, [5]);
      m.hist('hk', 3, [2]);
      m.hist('hk', 40, [10]);
      m.avg('neg', -7);
      m.sum('su', -5, [2]);
      m.sum('su', 5, [1]);
    },
    printed: `@ak[2]: 100
@ak[3]: 200
@ak[1]: 300

@hk[2]: 
[2, 4)                 1 ${bar(52)}

@hk[5]: 
[2, 4)                 1 ${bar(52)}

@hk[10]: 
[32, 64)               1 ${bar(52)}

@l: 
[2000, 3000)           1 ${bar(52)}
[3000, 4000)           0 ${bar(0)}
[4000, 5000)           1 ${bar(52)}

@mk[3, b]: 1
@mk[1, zz]: 2
@neg: -7

@su[2]: -5
@su[1]: 5
`,
  },
  {
    name: 'bars in single precision, K labels of linear histograms, open-ended buckets, wide counts',
    script:
      '@l = lhist(2048, 0, 8192, 1024); @h = hist(2); @h = hist(8); @h = hist(8); @h = hist(8); $i = 0; while ($i < 7) { @h = hist(32); $i++; } $j = 0; while ($j < 1000) { @w = hist(1); $j++; } @w = hist(4); @e = lhist(5, 0, 10, 1); @e = lhist(0, 0, 10, 1); @o = lhist(-1, 0, 100, 10); @o = lhist(150, 0, 100, 10); @n = hist(-3);',
    build(m) {
      m.lhist('l', 2048, 0, 8192, 1024);
      for (const v of [2, 8, 8, 8, 32, 32, 32, 32, 32, 32, 32]) m.hist('h', v);
      for (let i = 0; i < 1000; i++) m.hist('w', 1);
      m.hist('w', 4);
      m.lhist('e', 5, 0, 10, 1);
      m.lhist('e', 0, 0, 10, 1);
      m.lhist('o', -1, 0, 100, 10);
      m.lhist('o', 150, 0, 100, 10);
      m.hist('n', -3);
    },
    printed: `@e: 
[0, 1)                 1 ${bar(52)}
[1, 2)                 0 ${bar(0)}
[2, 3)                 0 ${bar(0)}
[3, 4)                 0 ${bar(0)}
[4, 5)                 0 ${bar(0)}
[5, 6)                 1 ${bar(52)}

@h: 
[2, 4)                 1 ${bar(7)}
[4, 8)                 0 ${bar(0)}
[8, 16)                3 ${bar(22)}
[16, 32)               0 ${bar(0)}
[32, 64)               7 ${bar(52)}

@l: 
[2K, 3K)               1 ${bar(52)}

@n: 
(..., 0)               1 ${bar(52)}

@o: 
(..., 0)               1 ${bar(52)}
[0, 10)                0 ${bar(0)}
[10, 20)               0 ${bar(0)}
[20, 30)               0 ${bar(0)}
[30, 40)               0 ${bar(0)}
[40, 50)               0 ${bar(0)}
[50, 60)               0 ${bar(0)}
[60, 70)               0 ${bar(0)}
[70, 80)               0 ${bar(0)}
[80, 90)               0 ${bar(0)}
[90, 100)              0 ${bar(0)}
[100, ...)             1 ${bar(52)}

@w: 
[1]                 1000 ${bar(52)}
[2, 4)                 0 ${bar(0)}
[4, 8)                 1 ${bar(0)}

`,
  },
];
