/**
 * The HCL parser behind the lock-file commands: tree-sitter's WebAssembly runtime (`web-tree-sitter`) with the
 * HCL grammar of the tree-sitter-grammars project (`@tree-sitter-grammars/tree-sitter-hcl`; its
 * `tree-sitter-hcl.wasm` is copied into `assets/` with the runtime's own `web-tree-sitter.wasm`, assets/README.md).
 * Both are WebAssembly, so nothing is compiled at install time; the grammar package's native binding is never installed with `provider`. Loaded lazily, once per process, on the first parse: only the lock command
 * pays the start-up (tens of milliseconds). Node positions are UTF-16 code-unit indices into the parsed string,
 * so `text.slice(node.startIndex, node.endIndex)` is the node's exact source.
 */
import type { Node, Parser } from 'web-tree-sitter';
import { packageFile } from '../packageFiles.js';

export type { Node as HclNode } from 'web-tree-sitter';

let parser: Promise<Parser> | undefined;

/** The process's one HCL parser, made on first use. */
function hclParser(): Promise<Parser> {
  parser ??= (async () => {
    const { Parser: TreeSitter, Language } = await import('web-tree-sitter');
    // The runtime's WebAssembly is handed over, not looked up beside its module: a bundle has no such folder.
    const runtime = packageFile('assets/web-tree-sitter.wasm');
    const wasmBinary = runtime.buffer.slice(runtime.byteOffset, runtime.byteOffset + runtime.byteLength);
    await TreeSitter.init({ wasmBinary: wasmBinary as ArrayBuffer });
    const made = new TreeSitter();
    made.setLanguage(await Language.load(packageFile('assets/tree-sitter-hcl.wasm')));
    return made;
  })();
  return parser;
}

/** Parses HCL source; returns the syntax tree's root node (`config_file`). */
export async function parseHcl(text: string): Promise<Node> {
  const tree = (await hclParser()).parse(text);
  if (tree === null) throw new Error('the HCL parser returned no tree');
  return tree.rootNode;
}

/** The first node of a tree that is a syntax error (an ERROR node or a token the parser had to invent). */
export function firstSyntaxError(root: Node): Node | undefined {
  if (!root.hasError) return undefined;
  const visit = (node: Node): Node | undefined => {
    if (node.type === 'ERROR' || node.isMissing) return node;
    for (const child of node.children) {
      if (child.hasError || child.isMissing) {
        const found = visit(child);
        if (found !== undefined) return found;
      }
    }
    return node.hasError ? node : undefined;
  };
  return visit(root);
}
