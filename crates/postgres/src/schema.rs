// The tables of `migrations/`, written by hand to match them.

diesel::table! {
    teams (id) {
        id -> Text,
        chat_webhook_url -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    users (id) {
        id -> Text,
        email -> Nullable<Text>,
        first_name -> Nullable<Text>,
        last_name -> Nullable<Text>,
        image_url -> Nullable<Text>,
        provider_updated_at -> Nullable<Int8>,
        deleted_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    memberships (user_id, team_id) {
        user_id -> Text,
        team_id -> Text,
        role -> Text,
        updated_at -> Timestamptz,
        provider_updated_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    membership_removals (user_id, team_id) {
        user_id -> Text,
        team_id -> Text,
        removed_at -> Timestamptz,
        provider_updated_at -> BigInt,
    }
}

diesel::table! {
    locations (id) {
        id -> Uuid,
        team_id -> Text,
        name -> Text,
        slug -> Text,
        timezone -> Text,
        scheduler_location_id -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    job_runs (id) {
        id -> Uuid,
        job -> Text,
        correlation_id -> Uuid,
        started_at -> Timestamptz,
        finished_at -> Nullable<Timestamptz>,
        status -> Text,
        summary -> Jsonb,
    }
}

diesel::table! {
    contacts (id) {
        id -> Uuid,
        team_id -> Text,
        name -> Text,
        phone -> Nullable<Text>,
        email -> Nullable<Text>,
        notes -> Nullable<Text>,
        created_at -> Timestamptz,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    incidents (id) {
        id -> Uuid,
        team_id -> Text,
        location_id -> Uuid,
        #[sql_name = "type"]
        incident_type -> Text,
        severity -> Text,
        status -> Text,
        notes -> Text,
        media_urls -> Array<Text>,
        contact_id -> Nullable<Uuid>,
        reported_by -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    incident_comments (id) {
        id -> Uuid,
        incident_id -> Uuid,
        author_id -> Text,
        content -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    incident_status_changes (id) {
        id -> Uuid,
        incident_id -> Uuid,
        from_status -> Text,
        to_status -> Text,
        changed_by -> Text,
        changed_at -> Timestamptz,
    }
}

diesel::table! {
    shift_reports (id) {
        id -> Uuid,
        team_id -> Text,
        location_id -> Uuid,
        date -> Date,
        shift -> Text,
        actual_sales -> Numeric,
        goal_sales -> Numeric,
        hero -> Nullable<Text>,
        submitted_by -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    manager_reports (id) {
        id -> Uuid,
        team_id -> Text,
        location_id -> Uuid,
        date -> Date,
        total_sales -> Numeric,
        employee_reviews -> Jsonb,
        submitted_by -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    webhook_deliveries (source, delivery_id) {
        source -> Text,
        delivery_id -> Text,
        body_sha256 -> Text,
        event_type -> Text,
        received_at -> Timestamptz,
    }
}

diesel::table! {
    push_subscriptions (id) {
        id -> Uuid,
        user_id -> Text,
        endpoint -> Text,
        p256dh -> Text,
        auth -> Text,
        expiration_time -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    schedule_shifts (id) {
        id -> Uuid,
        location_id -> Uuid,
        provider_shift_id -> Text,
        business_date -> Date,
        employee_name -> Text,
        employee_key -> Text,
        role -> Text,
        department -> Text,
        daypart -> Text,
        start_at -> Timestamptz,
        end_at -> Timestamptz,
        unpaid_break_minutes -> Int4,
        hours_worked -> Numeric,
        hourly_wage -> Numeric,
        is_draft -> Bool,
        synced_at -> Timestamptz,
    }
}

diesel::table! {
    time_punches (location_id, provider_punch_id) {
        location_id -> Uuid,
        provider_punch_id -> Text,
        employee_key -> Text,
        department -> Text,
        business_date -> Date,
        clocked_in -> Timestamptz,
        clocked_out -> Nullable<Timestamptz>,
        approved -> Bool,
        unpaid_break_minutes -> Int4,
        worked_hours -> Nullable<Numeric>,
        hourly_wage -> Numeric,
        synced_at -> Timestamptz,
    }
}

diesel::table! {
    punch_sync_state (location_id) {
        location_id -> Uuid,
        synced_through -> Timestamptz,
    }
}

diesel::table! {
    sales_facts (location_id, date, block) {
        location_id -> Uuid,
        date -> Date,
        block -> Text,
        food -> Numeric,
        beverage -> Numeric,
        other -> Numeric,
        guests -> Nullable<Int4>,
        updated_at -> Timestamptz,
    }
}

// Team-wide daily totals, kept by triggers on sales_facts and schedule_shifts (migration 000012).
diesel::table! {
    team_daily_sales (team_id, date, block) {
        team_id -> Text,
        date -> Date,
        block -> Text,
        facts -> Int4,
        food -> Numeric,
        beverage -> Numeric,
        other -> Numeric,
        guests -> Int8,
        guest_facts -> Int4,
    }
}

diesel::table! {
    team_daily_labor (team_id, business_date, department) {
        team_id -> Text,
        business_date -> Date,
        department -> Text,
        shifts -> Int4,
        hours -> Numeric,
        cost -> Numeric,
    }
}

diesel::joinable!(memberships -> users (user_id));
diesel::joinable!(sales_facts -> locations (location_id));
diesel::joinable!(schedule_shifts -> locations (location_id));
diesel::joinable!(time_punches -> locations (location_id));
diesel::joinable!(memberships -> teams (team_id));
diesel::joinable!(locations -> teams (team_id));

diesel::joinable!(incidents -> locations (location_id));
diesel::joinable!(incident_comments -> incidents (incident_id));
diesel::joinable!(incident_status_changes -> incidents (incident_id));

diesel::allow_tables_to_appear_in_same_query!(
    teams,
    users,
    memberships,
    membership_removals,
    locations,
    job_runs,
    contacts,
    incidents,
    incident_comments,
    incident_status_changes,
    shift_reports,
    manager_reports,
    webhook_deliveries,
    push_subscriptions,
    schedule_shifts,
    sales_facts,
    time_punches,
    punch_sync_state,
);
