// Public API of @probeyard/script: bpftrace-style one-liners compiled to relocatable eBPF.
export { type ScriptErrorCode, type ScriptDiagnostic, type SourceSpan, ScriptError, isScriptError } from './errors.js';
export { SourceText, formatDiagnostic, formatDiagnostics } from './source-text.js';
export type { ScriptAst, ProbeNode, AttachPointNode, Stmt, Expr, MapExpr, VarExpr, BinaryOp, UnaryOp, AssignOp, IntTypeName } from './ast.js';
export { parseScript, parseExpression } from './parser.js';
export { type ScriptTarget, targetOf, targetOfFormats, targetOfProfile, noTarget } from './target.js';
export { type ProviderProbe, type ProviderBinding, type ProviderResolver, type ResolvedProbe, resolveAttachPoint } from './probes.js';
export { type ProviderFailure, type ScriptCompatOptions, providerResolver, checkScriptCompat } from './providers.js';
export { type ScriptType, type FieldShape, fieldShape, STRING_SIZE } from './script-types.js';
export {
  type CompileOptions,
  type CompiledScript,
  type ProviderProgram,
  type FailedScript,
  type CompileResult,
  type ScriptArtifact,
  compileScript,
  compileScriptOrThrow,
  compileScriptArtifact,
  encodeScriptArtifact,
  decodeScriptArtifact,
  isScriptArtifact,
  artifactTarget,
} from './compile.js';
// printf formatting lives in packages/compat (the runtime renders printf actions without this package)
export { type PrintfConversion, type PrintfSegment, parsePrintf, formatPrintf, formatIntegerConversion, formatStringConversion } from '@probeyard/compat';
