// The limits a player sets on themself (responsible gaming, docs/cashier.md): the Limits screen, its
// forms and their confirmations, and the session reminder's notice.
import type { Entry } from "./entry";

export const LIMITS = {
  "limits.open": { ru: "Лимиты", en: "Limits" },
  "limits.title": { ru: "Лимиты", en: "Limits" },
  "limits.back": { ru: "Назад", en: "Back" },
  "limits.intro": {
    ru: "Лимиты, которые вы ставите себе сами. Более строгий лимит действует сразу; повышение или снятие — через 24 часа.",
    en: "Limits you set yourself. A stricter limit applies at once; a raise or a removal after 24 hours.",
  },
  "limits.pool": { ru: "Пул {pool}", en: "{pool} pool" },
  "limits.kind_head": { ru: "Лимит", en: "Limit" },
  "limits.amount_head": { ru: "Действует", en: "In force" },
  "limits.left_head": { ru: "Осталось", en: "Left" },
  "limits.pending_head": { ru: "Изменение", en: "Change" },
  "limits.none": { ru: "нет", en: "none" },
  "limits.dash": { ru: "—", en: "—" },
  "limits.pending": { ru: "{amount} с {time}", en: "{amount} from {time}" },
  "limits.pending_removal": { ru: "снятие с {time}", en: "removed from {time}" },
  "kind.PURCHASE_DAILY": { ru: "Покупки за сутки", en: "Bought per day" },
  "kind.PURCHASE_WEEKLY": { ru: "Покупки за неделю", en: "Bought per week" },
  "kind.PURCHASE_MONTHLY": { ru: "Покупки за месяц", en: "Bought per month" },
  "kind.LOSS_DAILY": { ru: "Проигрыш за сутки", en: "Lost per day" },
  "kind.LOSS_WEEKLY": { ru: "Проигрыш за неделю", en: "Lost per week" },
  "kind.LOSS_MONTHLY": { ru: "Проигрыш за месяц", en: "Lost per month" },
  "limits.windows": {
    ru: "Сутки — последние 24 часа, неделя — 7 дней, месяц — 30 дней, считая от текущего момента.",
    en: "A day is the last 24 hours, a week the last 7 days, a month the last 30 days, counted back from now.",
  },

  // The reminder and the break as they stand.
  "limits.reminder_title": { ru: "Напоминание о времени игры", en: "Session reminder" },
  "limits.reminder_off": { ru: "Напоминание выключено.", en: "The reminder is off." },
  "limits.reminder_every": {
    ru: { one: "Напоминать каждую {count} минуту.", few: "Напоминать каждые {count} минуты.", many: "Напоминать каждые {count} минут.", other: "Напоминать каждые {count} минуты." },
    en: { one: "Remind me every {count} minute.", other: "Remind me every {count} minutes." },
  },
  "limits.break_title": { ru: "Перерыв в игре", en: "Break from play" },
  "limits.no_break": { ru: "Перерыва нет.", en: "No break is running." },
  "limits.break_cooling": { ru: "Перерыв до {time}: покупки и игра за столами закрыты.", en: "Cooling-off until {time}: purchases and seats are closed." },
  "limits.break_exclusion": { ru: "Самоисключение до {time}: покупки и игра за столами закрыты.", en: "Self-exclusion until {time}: purchases and seats are closed." },

  // Setting a limit.
  "limits.set_title": { ru: "Установить лимит", en: "Set a limit" },
  "limits.pool_label": { ru: "Пул", en: "Pool" },
  "limits.kind_label": { ru: "Лимит", en: "Limit" },
  "limits.amount_label": { ru: "Фишек (0 — без лимита)", en: "Chips (0: no limit)" },
  "limits.set": { ru: "Установить", en: "Set" },
  "limits.amount_invalid": { ru: "Укажите целое число фишек от 0 до 1 000 000 000 000.", en: "Enter a whole number of chips from 0 to 1,000,000,000,000." },
  "limits.confirm_at_once": { ru: "«{kind}» в пуле {pool}: {amount}. Новый лимит начнёт действовать сразу.", en: "{kind} in {pool}: {amount}. The new limit applies at once." },
  "limits.confirm_later": {
    ru: "«{kind}» в пуле {pool}: {amount}. Это повышение, оно начнёт действовать через 24 часа, примерно {time}; до тех пор действует прежний лимит.",
    en: "{kind} in {pool}: {amount}. This is a raise: it takes effect after 24 hours, around {time}; until then the present limit holds.",
  },
  "limits.confirm_removal": {
    ru: "Снять лимит «{kind}» в пуле {pool}? Снятие начнёт действовать через 24 часа, примерно {time}; до тех пор действует прежний лимит.",
    en: "Remove the limit {kind} in {pool}? The removal takes effect after 24 hours, around {time}; until then the present limit holds.",
  },
  "limits.confirm": { ru: "Подтвердить", en: "Confirm" },
  "limits.cancel": { ru: "Отмена", en: "Cancel" },
  "limits.sending": { ru: "отправка…", en: "sending…" },
  "limits.set_now": { ru: "Лимит установлен и уже действует.", en: "The limit is set and applies now." },
  "limits.set_later": { ru: "Изменение начнёт действовать {time}.", en: "The change takes effect at {time}." },

  // Setting the reminder.
  "limits.reminder_label": { ru: "Минут (0 — выключить, или от 15 до 720)", en: "Minutes (0 turns it off, or 15 to 720)" },
  "limits.reminder_save": { ru: "Сохранить напоминание", en: "Save the reminder" },
  "limits.reminder_invalid": { ru: "Укажите 0 или целое число минут от 15 до 720.", en: "Enter 0, or a whole number of minutes from 15 to 720." },
  "limits.reminder_saved": {
    ru: { one: "Напомним через каждую {count} минуту игры.", few: "Напомним через каждые {count} минуты игры.", many: "Напомним через каждые {count} минут игры.", other: "Напомним через каждые {count} минуты игры." },
    en: { one: "We will remind you every {count} minute of play.", other: "We will remind you every {count} minutes of play." },
  },
  "limits.reminder_turned_off": { ru: "Напоминание выключено.", en: "The reminder is off." },

  // Starting a break.
  "limits.break_kind_label": { ru: "Вид перерыва", en: "Kind of break" },
  "limits.cooling_off": { ru: "Перерыв (1–42 дня)", en: "Cooling-off (1–42 days)" },
  "limits.self_exclusion": { ru: "Самоисключение (от 183 дней)", en: "Self-exclusion (183 days or more)" },
  "limits.days_label": { ru: "Дней", en: "Days" },
  "limits.break_start": { ru: "Начать перерыв…", en: "Start a break…" },
  "limits.days_invalid_cooling": { ru: "Перерыв — от 1 до 42 дней.", en: "A cooling-off lasts 1 to 42 days." },
  "limits.days_invalid_exclusion": { ru: "Самоисключение — от 183 до 3650 дней.", en: "A self-exclusion lasts 183 to 3650 days." },
  "limits.break_warning": {
    ru: "Перерыв нельзя отменить или сократить. До {time} вы не сможете покупать фишки и садиться за столы.",
    en: "A break cannot be undone or shortened. Until {time} you cannot buy chips or take a seat.",
  },
  "limits.break_confirm_cooling": { ru: "Да, перерыв до {time}", en: "Yes, cool off until {time}" },
  "limits.break_confirm_exclusion": { ru: "Да, исключить себя до {time}", en: "Yes, exclude me until {time}" },
  "limits.break_started": { ru: "Перерыв действует до {time}.", en: "The break runs until {time}." },

  // The session reminder's notice.
  "reminder.notice": {
    ru: { one: "Вы играете уже {count} минуту. Может быть, пора сделать паузу?", few: "Вы играете уже {count} минуты. Может быть, пора сделать паузу?", many: "Вы играете уже {count} минут. Может быть, пора сделать паузу?", other: "Вы играете уже {count} минуты. Может быть, пора сделать паузу?" },
    en: { one: "You have been playing for {count} minute. Time for a pause?", other: "You have been playing for {count} minutes. Time for a pause?" },
  },
} satisfies Record<string, Entry>;
