// Every link and path in the repository stays inside it and exists (CI: .ci/checks/docs.sh).
//
//   - no tracked file points outside the checkout: no parent-directory notes folder, no absolute path into a
//     developer's machine, no notes that live elsewhere (OPS.md);
//   - every Markdown link or image in a tracked .md file resolves to a tracked file inside the
//     repository, and its #anchor to a heading of that file;
//   - every `*.md` file named anywhere is a file of the repository;
//   - every repository path named anywhere (src/…, docs/…, config/…, …) exists.
//
// External http(s) links are not fetched (CI has no network); they are the only way out.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const tracked = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f !== '' && existsSync(join(root, f)));
const trackedSet = new Set(tracked);
const dirs = new Set(tracked.flatMap((f) => f.split('/').slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join('/'))));
const basenames = new Set(tracked.map((f) => f.split('/').at(-1)));
const TEXT = /\.(md|ts|mjs|js|json|ya?ml|sh|service|txt)$|(^|\/)(Dockerfile|\.dockerignore|\.gitignore|run)$/;
const SKIP = new Set(['package-lock.json']);

const problems = [];
const fail = (file, line, msg) => problems.push(`${file}:${line}: ${msg}`);
const lineOf = (text, index) => text.slice(0, index).split('\n').length;

// GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, duplicates numbered.
function anchorsOf(text) {
  const seen = new Map();
  const out = new Set();
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    const m = !fence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const inside = (abs) => abs === root || abs.startsWith(root + sep);

for (const file of tracked) {
  if (!TEXT.test(file) || SKIP.has(file) || file === 'scripts/check-links.mjs') continue;
  const text = readFileSync(join(root, file), 'utf8');

  // 1. nothing outside the checkout
  for (const m of text.matchAll(/\.\.\/(?:s)hared\b|\/work\/[\w.-]+|\bshared\/(spec|DESIGN|VENUE|OPS)\b|\bOPS\.md\b/g)) {
    fail(file, lineOf(text, m.index), `points outside the repository: "${m[0]}"`);
  }

  // 2. Markdown links and images
  if (file.endsWith('.md')) {
    const body = text.replace(/```[\s\S]*?```/g, (b) => b.replace(/[^\n]/g, ' ')); // not inside code blocks
    for (const m of body.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)|<((?:https?:)[^>\s]+)>/g)) {
      const target = m[1] ?? m[2];
      if (/^(https?:|mailto:)/.test(target)) continue;
      const [path, anchor] = target.split('#');
      const abs = path === '' ? join(root, file) : resolve(dirname(join(root, file)), decodeURI(path));
      const rel = relative(root, abs).split(sep).join('/');
      if (!inside(abs)) {
        fail(file, lineOf(body, m.index), `link leaves the repository: ${target}`);
        continue;
      }
      if (!trackedSet.has(rel) && !dirs.has(rel)) {
        fail(file, lineOf(body, m.index), `link to a missing file: ${target}`);
        continue;
      }
      if (anchor && rel.endsWith('.md') && !anchorsOf(readFileSync(abs, 'utf8')).has(anchor)) {
        fail(file, lineOf(body, m.index), `link to a missing heading: ${target}`);
      }
    }
  }

  // 3. *.md files named anywhere (in prose, comments, code) are files of the repository
  for (const m of text.matchAll(/(?<![\w./-])((?:[\w.-]+\/)*[\w-]+\.md)\b/g)) {
    const name = m[1];
    const before = text.slice(Math.max(0, m.index - 200), m.index);
    if (/https?:\/\/\S*$/.test(before)) continue; // part of a URL
    if (/^(artifacts|dist|state|node_modules)\//.test(name)) continue; // written at run time, never committed
    const base = name.split('/').at(-1);
    const ok = name.includes('/') ? trackedSet.has(normalize(name)) || basenames.has(base) : basenames.has(base);
    if (!ok) fail(file, lineOf(text, m.index), `names ${name}, which is not a file of the repository`);
  }

  // 4. repository paths named anywhere exist
  for (const m of text.matchAll(/(?<![\w./@-])((?:src|test|config|docs|scripts|bench|systemd|\.ci)\/[\w./@-]*[\w@-])/g)) {
    const p = m[1];
    if (/[*${}]/.test(p)) continue;
    const before = text.slice(Math.max(0, m.index - 200), m.index);
    if (/https?:\/\/\S*$/.test(before)) continue;
    if (!trackedSet.has(p) && !dirs.has(p)) fail(file, lineOf(text, m.index), `names ${p}, which does not exist in the repository`);
  }
}

if (problems.length) {
  for (const p of problems) console.error(`FAIL: ${p}`);
  console.error(`${problems.length} link or path problem(s)`);
  process.exit(1);
}
console.log(`links and paths: ${tracked.length} files checked; every link and path stays inside the repository and exists`);
