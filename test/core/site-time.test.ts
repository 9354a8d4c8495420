/** The site's days (INTERFACE section 12): where each day begins in a zone, clock changes included. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { calendarDay, dayIn, dayStartIn, formatSiteTime, timeZoneListing, timeZoneNames } from '../../src/core/site-time.js';

const DAY_MS = 86_400_000;

test('a day in UTC+8 begins at 16:00:00Z the day before', () => {
  assert.equal(dayStartIn('2026-11-24', 'Asia/Shanghai'), Date.parse('2026-11-23T16:00:00Z'));
  assert.equal(dayStartIn('2027-01-01', 'Asia/Shanghai'), Date.parse('2026-12-31T16:00:00Z'));
});

test('a day whose midnight a clock change skips begins when the clock jumps past it', () => {
  // Chile moves its clocks from 00:00 to 01:00 (UTC−4 to UTC−3) on the first Sunday of September.
  assert.equal(dayStartIn('2026-09-06', 'America/Santiago'), Date.parse('2026-09-06T04:00:00Z'));
  assert.equal(dayIn(Date.parse('2026-09-06T04:00:00Z'), 'America/Santiago'), '2026-09-06');
  assert.equal(dayIn(Date.parse('2026-09-06T03:59:59.999Z'), 'America/Santiago'), '2026-09-05');
});

test('every day of two years begins where dayIn changes, in zones with and without clock changes', () => {
  const zones = ['Asia/Shanghai', 'UTC', 'America/Santiago', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/Havana'];
  for (const zone of zones) {
    for (let noon = Date.UTC(2026, 0, 1, 12); noon < Date.UTC(2028, 0, 1); noon += DAY_MS) {
      const day = dayIn(noon, 'UTC');
      const start = dayStartIn(day, zone);
      assert.equal(dayIn(start, zone), day, `${zone} ${day}`);
      assert.ok(dayIn(start - 1, zone) < day, `${zone} ${day}: the millisecond before is the day before`);
    }
  }
});

test('calendarDay counts whole dates across months, years and leap days, forward and back', () => {
  assert.equal(calendarDay('2026-11-24', 1), '2026-11-25');
  assert.equal(calendarDay('2026-12-31', 1), '2027-01-01');
  assert.equal(calendarDay('2028-03-01', -1), '2028-02-29');
  assert.equal(calendarDay('2026-11-24', -13), '2026-11-11');
});

test('the time-zone list gives every zone the offset its times are written with, on either side of a clock change', () => {
  // 2026-03-29 01:00Z Europe moves its clocks; 2026-04-04 15:00Z Lord Howe Island by half an hour; 2026-11-01 06:00Z New York.
  const instants = ['2026-03-29T00:59:59Z', '2026-03-29T01:00:00Z', '2026-04-04T14:59:59Z', '2026-04-04T15:00:00Z', '2026-11-01T06:00:00Z', '2026-11-30T12:00:00Z'].map(Date.parse);
  for (const zone of [...timeZoneNames(), 'UTC', 'Etc/GMT+5', 'Etc/GMT-14']) {
    for (const now of instants) {
      assert.equal(timeZoneListing(zone, 'zh-CN', now).offset, formatSiteTime(now, zone).split(' ')[2], `${zone} ${new Date(now).toISOString()}`);
    }
  }
});
