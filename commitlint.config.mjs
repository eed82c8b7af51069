// commitlint: the rules every new commit message follows (docs/releasing.md, "Commit messages"). semantic-release
// reads the type of each subject to pick the next version, so a subject must be conventional (`type(scope):
// summary`, the types of @commitlint/config-conventional plus `bench`) and at most 72 characters, with the
// details in the body. Body and footer lines may be any length: they hold figures, paths and links. No warning
// about a footer's blank line: the parser takes any wrapped body line that starts with `word:` for a footer. A
// subject may begin with a proper noun (`Node 22.14+`, `README …`): no rule on its case.
// scripts/check-commits.mjs applies it to the commits after the last one written before the rule existed.
import conventional from '@commitlint/config-conventional';

const [, , types] = conventional.rules['type-enum'];

export default {
  extends: ['@commitlint/config-conventional'],
  rules: {
    'header-max-length': [2, 'always', 72],
    'type-enum': [2, 'always', [...types, 'bench']],
    'body-max-line-length': [0],
    'footer-max-line-length': [0],
    'footer-leading-blank': [0],
    'subject-case': [0],
  },
};
