/** `checkAll`: every field of a form is checked, and every problem is reported (issue 18 item 10). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InputError, checkAll } from '../../src/core/errors.js';

const fails = (field: string, message: string) => (): never => { throw new InputError(field, message); };

test('checkAll returns every check\'s value, in order, when none fails', () => {
  const [name, count] = checkAll(() => 'app', () => 3);
  assert.deepEqual([name, count], ['app', 3]);
});

test('checkAll runs every check after one fails and throws one InputError naming every problem, in order', () => {
  let ran = false;
  const error = (() => {
    try {
      checkAll(fails('name', 'name must be 1 to 80 characters'), () => { ran = true; }, fails('homepage', 'homepage must be an http or https URL'));
    } catch (caught) {
      return caught;
    }
    return undefined;
  })();
  assert.ok(error instanceof InputError);
  assert.ok(ran, 'the checks after a failure ran');
  assert.deepEqual(error.problems, [
    { field: 'name', message: 'name must be 1 to 80 characters' },
    { field: 'homepage', message: 'homepage must be an http or https URL' },
  ]);
  assert.equal(error.field, 'name', 'the first problem is the error\'s own');
  assert.equal(error.message, 'name must be 1 to 80 characters; homepage must be an http or https URL');
});

test('checkAll lets an error that is not about input through at once', () => {
  assert.throws(() => checkAll(fails('name', 'bad'), () => { throw new TypeError('a bug'); }), TypeError);
});

test('an InputError of one field has that one problem and its message alone', () => {
  const error = new InputError('username', 'username must be 3 to 30 letters');
  assert.deepEqual(error.problems, [{ field: 'username', message: 'username must be 3 to 30 letters' }]);
  assert.equal(error.message, 'username must be 3 to 30 letters');
});
