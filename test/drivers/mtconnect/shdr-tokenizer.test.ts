/** The SHDR tokenizer against the reference agent's own cases (cppagent test_package/shdr_tokenizer_test.cpp). */
import { describe, expect, it } from 'vitest';
import { tokenize } from '../../../drivers/mtconnect/shdr-tokenizer.js';

describe('SHDR tokenizer', () => {
  it('splits on pipes and trims each field, with an empty field for a leading or trailing pipe', () => {
    const cases: Record<string, string[]> = {
      '   |hello   |   kitty| cat | ': ['', 'hello', 'kitty', 'cat', ''],
      'hello|kitty': ['hello', 'kitty'],
      'hello|kitty|': ['hello', 'kitty', ''],
      '|hello|kitty|': ['', 'hello', 'kitty', ''],
      'hello|xxx={b="12345", c="xxxxx"}}|bbb': ['hello', 'xxx={b="12345", c="xxxxx"}}', 'bbb'],
      'x|y||z': ['x', 'y', '', 'z'],
    };
    for (const [line, fields] of Object.entries(cases)) expect(tokenize(line), line).toEqual(fields);
  });

  it('reads a quoted field with escaped pipes as one field, and an unclosed quote as plain text', () => {
    const cases: Record<string, string[]> = {
      '"a\\|b"': ['a|b'],
      '"a\\|b"|z': ['a|b', 'z'],
      'y|"a\\|b"|z': ['y', 'a|b', 'z'],
      '"a\\|b\\|c"|z': ['a|b|c', 'z'],
      'y|"\\|b\\|c"': ['y', '|b|c'],
      '"a\\|b\\|"|z': ['a|b|', 'z'],
      'a\\|b"': ['a\\', 'b"'],
      'y|a\\|b\\|c"|z': ['y', 'a\\', 'b\\', 'c"', 'z'],
      '"a\\|b': ['"a\\', 'b'],
      'y|"a\\|b|z': ['y', '"a\\', 'b', 'z'],
      '"a\\|': ['"a\\', ''],
      'y|"a\\|"z': ['y', '"a\\', '"z'],
    };
    for (const [line, fields] of Object.entries(cases)) expect(tokenize(line), line).toEqual(fields);
  });

  it('refuses a line with more fields than the bound', () => {
    expect(tokenize('a|b|c', 3)).toEqual(['a', 'b', 'c']);
    expect(tokenize('a|b|c|d', 3)).toBeUndefined();
    expect(tokenize('|'.repeat(100_000), 4096)).toBeUndefined();
  });
});
